"""MeshGraphNets' cloth model as the PyTorch ports of DeepMind's code write
it: EdgeSet and MultiGraph `collections.namedtuple`s updated with
`_replace`, edges from mesh triangles (`triangles_to_edges`: the three sides
stacked, min/max to undirected pairs, `unique(dim=0)`, both directions
cat'ed), node features of velocity and a one-hot node type, edge features
of relative world and mesh positions with their norms, Normalizer modules
with accumulation buffers (`_acc_sum`, `_acc_sum_squared`, counts) that
accumulate only in training and otherwise standardise with a clamped std,
an encode-process-decode network of LayerNorm'd MLPs built by a
`make_mlp` closure, GraphNetBlocks updating edges from cat'ed sender,
receiver and edge features and nodes from an `unsorted_segment_sum` by
`scatter_add_` on an expanded index, residuals, and the second-order
integration `2 * cur - prev + acceleration` for kinematic-free nodes chosen
by `torch.where` on the node type."""
import collections
import enum
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F

EdgeSet = collections.namedtuple("EdgeSet", ["name", "features", "senders", "receivers"])
MultiGraph = collections.namedtuple("Graph", ["node_features", "edge_sets"])


class NodeType(enum.IntEnum):
    NORMAL = 0
    OBSTACLE = 1
    AIRFOIL = 2
    HANDLE = 3
    INFLOW = 4
    OUTFLOW = 5
    WALL_BOUNDARY = 6
    SIZE = 9


def triangles_to_edges(faces):
    edges = torch.cat((faces[:, 0:2], faces[:, 1:3], torch.stack((faces[:, 2], faces[:, 0]), dim=1)), dim=0)
    receivers = torch.min(edges, dim=1).values
    senders = torch.max(edges, dim=1).values
    packed_edges = torch.stack((senders, receivers), dim=1)
    unique_edges = torch.unique(packed_edges, return_inverse=False, return_counts=False, dim=0)
    senders, receivers = torch.unbind(unique_edges, dim=1)
    return (torch.cat((senders, receivers), dim=0), torch.cat((receivers, senders), dim=0))


def unsorted_segment_sum(data, segment_ids, num_segments):
    result_shape = (num_segments, data.shape[1])
    result = data.new_full(result_shape, 0)
    segment_ids = segment_ids.unsqueeze(-1).expand(-1, data.shape[-1])
    result.scatter_add_(0, segment_ids, data)
    return result


class Normalizer(nn.Module):
    def __init__(self, size, max_accumulations=10 ** 6, std_epsilon=1e-8, name="Normalizer"):
        super().__init__()
        self._name = name
        self._max_accumulations = max_accumulations
        self._std_epsilon = torch.tensor(std_epsilon)
        self.register_buffer("_acc_count", torch.zeros(1))
        self.register_buffer("_num_accumulations", torch.zeros(1))
        self.register_buffer("_acc_sum", torch.zeros(size))
        self.register_buffer("_acc_sum_squared", torch.zeros(size))

    def forward(self, batched_data, accumulate=True):
        if accumulate and self._num_accumulations < self._max_accumulations:
            self._accumulate(batched_data)
        return (batched_data - self._mean()) / self._std_with_epsilon()

    def inverse(self, normalized_batch_data):
        return normalized_batch_data * self._std_with_epsilon() + self._mean()

    def _accumulate(self, batched_data):
        count = batched_data.shape[0]
        data_sum = torch.sum(batched_data, dim=0)
        squared_data_sum = torch.sum(batched_data ** 2, dim=0)
        self._acc_sum += data_sum
        self._acc_sum_squared += squared_data_sum
        self._acc_count += count
        self._num_accumulations += 1

    def _mean(self):
        safe_count = torch.maximum(self._acc_count, torch.tensor(1.0, device=self._acc_count.device))
        return self._acc_sum / safe_count

    def _std_with_epsilon(self):
        safe_count = torch.maximum(self._acc_count, torch.tensor(1.0, device=self._acc_count.device))
        std = torch.sqrt(self._acc_sum_squared / safe_count - self._mean() ** 2)
        return torch.maximum(std, self._std_epsilon.to(std.device))


class LazyMLP(nn.Module):
    def __init__(self, input_size, widths, layer_norm=True):
        super().__init__()
        layers = collections.OrderedDict()
        for i, width in enumerate(widths):
            layers[f"linear_{i}"] = nn.Linear(input_size, width)
            input_size = width
            if i < len(widths) - 1:
                layers[f"relu_{i}"] = nn.ReLU()
        if layer_norm:
            layers["layer_norm"] = nn.LayerNorm(widths[-1])
        self.layers = nn.Sequential(layers)

    def forward(self, x):
        return self.layers(x)


class GraphNetBlock(nn.Module):
    def __init__(self, model_fn, latent_size):
        super().__init__()
        self.edge_model = model_fn(3 * latent_size)
        self.node_model = model_fn(2 * latent_size)

    def _update_edge_features(self, node_features, edge_set):
        sender_features = torch.index_select(node_features, 0, edge_set.senders)
        receiver_features = torch.index_select(node_features, 0, edge_set.receivers)
        features = [sender_features, receiver_features, edge_set.features]
        return self.edge_model(torch.cat(features, dim=-1))

    def _update_node_features(self, node_features, edge_sets):
        num_nodes = node_features.shape[0]
        features = [node_features]
        for edge_set in edge_sets:
            features.append(unsorted_segment_sum(edge_set.features, edge_set.receivers, num_nodes))
        return self.node_model(torch.cat(features, dim=-1))

    def forward(self, graph):
        new_edge_sets = []
        for edge_set in graph.edge_sets:
            updated_features = self._update_edge_features(graph.node_features, edge_set)
            new_edge_sets.append(edge_set._replace(features=updated_features))
        new_node_features = self._update_node_features(graph.node_features, new_edge_sets)
        new_node_features = new_node_features + graph.node_features
        new_edge_sets = [es._replace(features=es.features + old_es.features)
                         for es, old_es in zip(new_edge_sets, graph.edge_sets)]
        return MultiGraph(new_node_features, new_edge_sets)


class EncodeProcessDecode(nn.Module):
    def __init__(self, node_in, edge_in, output_size, latent_size=16, num_layers=2, message_passing_steps=3):
        super().__init__()
        self._latent_size = latent_size
        self._output_size = output_size
        self._num_layers = num_layers

        def make_mlp(input_size, output_size=None, layer_norm=True):
            widths = [self._latent_size] * self._num_layers + [output_size or self._latent_size]
            return LazyMLP(input_size, widths, layer_norm=layer_norm)

        self.node_encoder = make_mlp(node_in)
        self.edge_encoder = make_mlp(edge_in)
        self.processor = nn.ModuleList([GraphNetBlock(make_mlp, latent_size) for _ in range(message_passing_steps)])
        self.decoder = make_mlp(latent_size, output_size, layer_norm=False)

    def forward(self, graph):
        node_latents = self.node_encoder(graph.node_features)
        new_edges_sets = [edge_set._replace(features=self.edge_encoder(edge_set.features))
                          for edge_set in graph.edge_sets]
        latent_graph = MultiGraph(node_latents, new_edges_sets)
        for block in self.processor:
            latent_graph = block(latent_graph)
        return self.decoder(latent_graph.node_features)


class ClothModel(nn.Module):
    def __init__(self):
        super().__init__()
        self._output_normalizer = Normalizer(size=3, name="output_normalizer")
        self._node_normalizer = Normalizer(size=3 + NodeType.SIZE, name="node_normalizer")
        self._edge_normalizer = Normalizer(size=7, name="edge_normalizer")
        self.learned_model = EncodeProcessDecode(node_in=3 + NodeType.SIZE, edge_in=7, output_size=3)

    def _build_graph(self, inputs, is_training):
        velocity = inputs["world_pos"] - inputs["prev|world_pos"]
        node_type = F.one_hot(inputs["node_type"][:, 0].to(torch.int64), NodeType.SIZE)
        node_features = torch.cat((velocity, node_type), dim=-1)
        senders, receivers = triangles_to_edges(inputs["cells"])
        relative_world_pos = (torch.index_select(inputs["world_pos"], 0, senders)
                              - torch.index_select(inputs["world_pos"], 0, receivers))
        relative_mesh_pos = (torch.index_select(inputs["mesh_pos"], 0, senders)
                             - torch.index_select(inputs["mesh_pos"], 0, receivers))
        edge_features = torch.cat((relative_world_pos, torch.norm(relative_world_pos, dim=-1, keepdim=True),
                                   relative_mesh_pos, torch.norm(relative_mesh_pos, dim=-1, keepdim=True)),
                                  dim=-1)
        mesh_edges = EdgeSet(name="mesh_edges", features=self._edge_normalizer(edge_features, is_training),
                             receivers=receivers, senders=senders)
        return MultiGraph(node_features=self._node_normalizer(node_features, is_training),
                          edge_sets=[mesh_edges])

    def forward(self, inputs):
        graph = self._build_graph(inputs, is_training=self.training)
        network_output = self.learned_model(graph)
        acceleration = self._output_normalizer.inverse(network_output)
        cur_position = inputs["world_pos"]
        prev_position = inputs["prev|world_pos"]
        position = 2 * cur_position + acceleration - prev_position
        loss_mask = torch.eq(inputs["node_type"][:, 0], torch.tensor([NodeType.NORMAL.value]))
        next_position = torch.where(loss_mask.unsqueeze(-1), position, cur_position)
        target_acceleration = inputs["target|world_pos"] - 2 * cur_position + prev_position
        target_normalized = self._output_normalizer(target_acceleration, self.training)
        error = torch.sum((target_normalized - network_output) ** 2, dim=1)
        loss = torch.mean(error[loss_mask])
        return next_position, loss


def _warm_normalizers(module, g):
    # statistics as a training run leaves them
    for norm in (module._output_normalizer, module._node_normalizer, module._edge_normalizer):
        size = norm._acc_sum.shape[0]
        norm._acc_count.fill_(50.0)
        norm._num_accumulations.fill_(5.0)
        mean = torch.randn(size, generator=g) * 0.1
        norm._acc_sum.copy_(mean * 50.0)
        norm._acc_sum_squared.copy_((mean ** 2 + torch.rand(size, generator=g) + 0.5) * 50.0)


torch.manual_seed(0)
model = ClothModel().eval()
_warm_normalizers(model, torch.Generator().manual_seed(2))
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    rows, cols = 3, 4
    ids = torch.arange(rows * cols).view(rows, cols)
    a, b = ids[:-1, :-1].reshape(-1), ids[:-1, 1:].reshape(-1)
    c, d = ids[1:, :-1].reshape(-1), ids[1:, 1:].reshape(-1)
    cells = torch.cat([torch.stack([a, b, c], 1), torch.stack([b, d, c], 1)])
    mesh_pos = torch.stack(torch.meshgrid(torch.arange(rows).float(), torch.arange(cols).float(),
                                          indexing="ij"), -1).view(-1, 2)
    world_pos = torch.cat([mesh_pos, torch.zeros(rows * cols, 1)], 1) + 0.05 * torch.randn(rows * cols, 3, generator=g)
    prev = world_pos - 0.01 * torch.randn(rows * cols, 3, generator=g)
    target = world_pos + 0.01 * torch.randn(rows * cols, 3, generator=g)
    node_type = torch.zeros(rows * cols, 1, dtype=torch.int32)
    node_type[0, 0] = NodeType.HANDLE
    node_type[cols - 1, 0] = NodeType.HANDLE
    return ({"world_pos": world_pos, "prev|world_pos": prev, "target|world_pos": target, "mesh_pos": mesh_pos,
             "node_type": node_type, "cells": cells},)
