"""An E(n)-equivariant GNN as the EGNN reference (vgsatorras/egnn) writes
it, over a radius graph as SchNet-style code builds one: pairwise
distances by `torch.cdist`, edges within a cutoff and in the same
molecule (a `batch` vector) from `nonzero().t()` without self loops,
`unsorted_segment_sum`/`unsorted_segment_mean` by `new_full` and
`scatter_add_` over an expanded index, the coordinate update
`x + mean(coord_diff * phi_x(m_ij))` with `coords_agg="mean"`, a
tanh-bounded coordinate MLP, a cosine cutoff on the edge weights, and
graph readout by `index_add_`."""
import math

import torch
import torch.nn as nn


def unsorted_segment_sum(data, segment_ids, num_segments):
    result_shape = (num_segments, data.size(1))
    result = data.new_full(result_shape, 0)  # Init empty result tensor.
    segment_ids = segment_ids.unsqueeze(-1).expand(-1, data.size(1))
    result.scatter_add_(0, segment_ids, data)
    return result


def unsorted_segment_mean(data, segment_ids, num_segments):
    result_shape = (num_segments, data.size(1))
    segment_ids = segment_ids.unsqueeze(-1).expand(-1, data.size(1))
    result = data.new_full(result_shape, 0)
    count = data.new_full(result_shape, 0)
    result.scatter_add_(0, segment_ids, data)
    count.scatter_add_(0, segment_ids, torch.ones_like(data))
    return result / count.clamp(min=1)


def radius_graph(pos, batch, cutoff):
    dist = torch.cdist(pos, pos)
    same = batch[:, None] == batch[None, :]
    adj = (dist < cutoff) & same
    adj.fill_diagonal_(False)
    row, col = adj.nonzero().t()
    return row, col


class CosineCutoff(nn.Module):
    def __init__(self, cutoff):
        super().__init__()
        self.cutoff = cutoff

    def forward(self, distances):
        cutoffs = 0.5 * (torch.cos(distances * math.pi / self.cutoff) + 1.0)
        return cutoffs * (distances < self.cutoff).float()


class E_GCL(nn.Module):
    def __init__(self, input_nf, output_nf, hidden_nf, act_fn=nn.SiLU(), residual=True, attention=False,
                 normalize=False, coords_agg="mean", tanh=True, cutoff=2.0):
        super().__init__()
        input_edge = input_nf * 2
        self.residual, self.attention, self.normalize = residual, attention, normalize
        self.coords_agg, self.tanh = coords_agg, tanh
        self.epsilon = 1e-8
        edge_coords_nf = 1
        self.edge_mlp = nn.Sequential(nn.Linear(input_edge + edge_coords_nf, hidden_nf), act_fn,
                                      nn.Linear(hidden_nf, hidden_nf), act_fn)
        self.node_mlp = nn.Sequential(nn.Linear(hidden_nf + input_nf, hidden_nf), act_fn,
                                      nn.Linear(hidden_nf, output_nf))
        layer = nn.Linear(hidden_nf, 1, bias=False)
        torch.nn.init.xavier_uniform_(layer.weight, gain=0.001)
        coord_mlp = [nn.Linear(hidden_nf, hidden_nf), act_fn, layer]
        if self.tanh:
            coord_mlp.append(nn.Tanh())
        self.coord_mlp = nn.Sequential(*coord_mlp)
        if self.attention:
            self.att_mlp = nn.Sequential(nn.Linear(hidden_nf, 1), nn.Sigmoid())
        self.cutoff = CosineCutoff(cutoff)

    def edge_model(self, source, target, radial):
        out = torch.cat([source, target, radial], dim=1)
        out = self.edge_mlp(out)
        if self.attention:
            out = out * self.att_mlp(out)
        return out * self.cutoff(torch.sqrt(radial + self.epsilon))

    def node_model(self, x, edge_index, edge_attr):
        row, col = edge_index
        agg = unsorted_segment_sum(edge_attr, row, num_segments=x.size(0))
        agg = torch.cat([x, agg], dim=1)
        out = self.node_mlp(agg)
        if self.residual:
            out = x + out
        return out, agg

    def coord_model(self, coord, edge_index, coord_diff, edge_feat):
        row, col = edge_index
        trans = coord_diff * self.coord_mlp(edge_feat)
        if self.coords_agg == "sum":
            agg = unsorted_segment_sum(trans, row, num_segments=coord.size(0))
        elif self.coords_agg == "mean":
            agg = unsorted_segment_mean(trans, row, num_segments=coord.size(0))
        else:
            raise Exception("Wrong coords_agg parameter" % self.coords_agg)
        return coord + agg

    def coord2radial(self, edge_index, coord):
        row, col = edge_index
        coord_diff = coord[row] - coord[col]
        radial = torch.sum(coord_diff ** 2, 1).unsqueeze(1)
        if self.normalize:
            norm = torch.sqrt(radial).detach() + self.epsilon
            coord_diff = coord_diff / norm
        return radial, coord_diff

    def forward(self, h, edge_index, coord):
        row, col = edge_index
        radial, coord_diff = self.coord2radial(edge_index, coord)
        edge_feat = self.edge_model(h[row], h[col], radial)
        coord = self.coord_model(coord, edge_index, coord_diff, edge_feat)
        h, agg = self.node_model(h, edge_index, edge_feat)
        return h, coord


class EGNN(nn.Module):
    def __init__(self, in_node_nf=5, hidden_nf=32, out_node_nf=1, n_layers=3, cutoff=2.0):
        super().__init__()
        self.cutoff = cutoff
        self.embedding_in = nn.Linear(in_node_nf, hidden_nf)
        self.embedding_out = nn.Linear(hidden_nf, out_node_nf)
        for i in range(0, n_layers):
            self.add_module("gcl_%d" % i, E_GCL(hidden_nf, hidden_nf, hidden_nf, cutoff=cutoff))
        self.n_layers = n_layers

    def forward(self, h, x, batch, num_graphs: int):
        edges = radius_graph(x, batch, self.cutoff)
        h = self.embedding_in(h)
        for i in range(0, self.n_layers):
            h, x = self._modules["gcl_%d" % i](h, edges, x)
        h = self.embedding_out(h)
        energy = torch.zeros(num_graphs, h.size(1), dtype=h.dtype).index_add_(0, batch, h)
        return energy, x


torch.manual_seed(0)
model = EGNN().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    n = 9
    batch = torch.tensor([0, 0, 0, 0, 1, 1, 1, 1, 1])
    h = torch.nn.functional.one_hot(torch.randint(0, 5, (n,), generator=g), 5).float()
    x = torch.randn(n, 3, generator=g)
    return h, x, batch, 2
