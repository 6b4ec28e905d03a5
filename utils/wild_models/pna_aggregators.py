"""Principal Neighbourhood Aggregation as PyG's PNAConv and its aggregation
helpers write it without torch_scatter: aggregators and scalers chosen by
name from module-level dicts of functions (`AGGREGATORS["std"]`,
`SCALERS["amplification"]`), the degree histogram of the training set
turned into `avg_deg` log/lin statistics in __init__ (`deg * arange`
weighted sums over `deg.sum()`), messages from cat'ed [x_i, x_j, e_ij]
through pre-MLPs per tower, mean/min/max/std by `scatter_reduce`
(`include_self=False`) and `index_add` of squares with a `relu(...) + 1e-5`
before `sqrt`, the degree by `index_add` of ones clamped to 1, scalers by
`torch.log(deg + 1) / avg_deg["log"]` broadcast with `view(-1, 1)`,
towers split by `torch.chunk` of the features, post-MLPs, a linear mixer,
BatchNorm'd residual blocks, and a graph readout by segment means and
`global_add_pool` for a regression loss."""
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F


def scatter(src, index, dim_size, reduce):
    out_shape = (dim_size,) + tuple(src.shape[1:])
    idx = index.view(-1, *([1] * (src.dim() - 1))).expand_as(src)
    if reduce == "sum":
        return src.new_zeros(out_shape).index_add(0, index, src)
    if reduce == "mean":
        total = src.new_zeros(out_shape).index_add(0, index, src)
        count = src.new_zeros(dim_size).index_add(0, index, src.new_ones(index.numel()))
        return total / count.clamp(min=1).view(-1, *([1] * (src.dim() - 1)))
    if reduce in ("amin", "amax"):
        return src.new_zeros(out_shape).scatter_reduce(0, idx, src, reduce=reduce, include_self=False)
    raise ValueError(f"unknown reduce {reduce!r}")


def aggregate_mean(src, index, dim_size):
    return scatter(src, index, dim_size, "mean")


def aggregate_min(src, index, dim_size):
    return scatter(src, index, dim_size, "amin")


def aggregate_max(src, index, dim_size):
    return scatter(src, index, dim_size, "amax")


def aggregate_var(src, index, dim_size):
    mean = aggregate_mean(src, index, dim_size)
    mean_squares = aggregate_mean(src * src, index, dim_size)
    return mean_squares - mean * mean


def aggregate_std(src, index, dim_size):
    return torch.sqrt(torch.relu(aggregate_var(src, index, dim_size)) + 1e-5)


AGGREGATORS = {
    "mean": aggregate_mean,
    "min": aggregate_min,
    "max": aggregate_max,
    "var": aggregate_var,
    "std": aggregate_std,
}


def scale_identity(src, deg, avg_deg):
    return src


def scale_amplification(src, deg, avg_deg):
    return src * (torch.log(deg + 1) / avg_deg["log"])


def scale_attenuation(src, deg, avg_deg):
    scale = avg_deg["log"] / torch.log(deg + 1)
    scale[deg == 0] = 1
    return src * scale


def scale_linear(src, deg, avg_deg):
    return src * (deg / avg_deg["lin"])


SCALERS = {
    "identity": scale_identity,
    "amplification": scale_amplification,
    "attenuation": scale_attenuation,
    "linear": scale_linear,
}


class PNAConv(nn.Module):
    def __init__(self, in_channels, out_channels, aggregators, scalers, deg, edge_dim=None, towers=1,
                 pre_layers=1, post_layers=1, divide_input=False):
        super().__init__()
        if divide_input:
            assert in_channels % towers == 0
        assert out_channels % towers == 0
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.aggregators = [AGGREGATORS[aggr] for aggr in aggregators]
        self.scalers = [SCALERS[scale] for scale in scalers]
        self.edge_dim = edge_dim
        self.towers = towers
        self.divide_input = divide_input
        self.F_in = in_channels // towers if divide_input else in_channels
        self.F_out = self.out_channels // towers

        deg = deg.to(torch.float)
        num_nodes = int(deg.sum())
        bin_degrees = torch.arange(deg.numel())
        self.avg_deg = {
            "lin": float((bin_degrees * deg).sum()) / num_nodes,
            "log": float(((bin_degrees + 1).log() * deg).sum()) / num_nodes,
            "exp": float((bin_degrees.exp() * deg).sum()) / num_nodes,
        }
        if self.edge_dim is not None:
            self.edge_encoder = nn.Linear(edge_dim, self.F_in)
        self.pre_nns = nn.ModuleList()
        self.post_nns = nn.ModuleList()
        for _ in range(towers):
            modules = [nn.Linear((3 if edge_dim else 2) * self.F_in, self.F_in)]
            for _ in range(pre_layers - 1):
                modules += [nn.ReLU(), nn.Linear(self.F_in, self.F_in)]
            self.pre_nns.append(nn.Sequential(*modules))
            in_channels = (len(aggregators) * len(scalers) + 1) * self.F_in
            modules = [nn.Linear(in_channels, self.F_out)]
            for _ in range(post_layers - 1):
                modules += [nn.ReLU(), nn.Linear(self.F_out, self.F_out)]
            self.post_nns.append(nn.Sequential(*modules))
        self.lin = nn.Linear(out_channels, out_channels)

    def forward(self, x, edge_index, edge_attr=None):
        if self.divide_input:
            x = x.view(-1, self.towers, self.F_in)
        else:
            x = x.view(-1, 1, self.F_in).repeat(1, self.towers, 1)
        src, dst = edge_index[0], edge_index[1]
        x_i, x_j = x[dst], x[src]
        h = torch.cat([x_i, x_j], dim=-1)
        if edge_attr is not None and self.edge_dim is not None:
            edge_attr = self.edge_encoder(edge_attr)
            edge_attr = edge_attr.view(-1, 1, self.F_in).repeat(1, self.towers, 1)
            h = torch.cat([h, edge_attr], dim=-1)
        hs = [nn(h[:, i]) for i, nn in enumerate(self.pre_nns)]
        messages = torch.stack(hs, dim=1)

        num_nodes = x.size(0)
        outs = [aggr(messages, dst, num_nodes) for aggr in self.aggregators]
        out = torch.cat(outs, dim=-1)
        deg = scatter(dst.new_ones(dst.numel(), dtype=out.dtype), dst, num_nodes, "sum").clamp_(1)
        deg = deg.view(-1, 1, 1)
        outs = [scaler(out, deg, self.avg_deg) for scaler in self.scalers]
        out = torch.cat(outs, dim=-1)

        out = torch.cat([x, out], dim=-1)
        outs = [nn(out[:, i]) for i, nn in enumerate(self.post_nns)]
        out = torch.cat(outs, dim=1)
        return self.lin(out)


def global_add_pool(x, batch, size=None):
    size = int(batch.max().item() + 1) if size is None else size
    return scatter(x, batch, size, "sum")


class Net(nn.Module):
    def __init__(self, deg, num_atom_types=6, hidden=16, edge_dim=3, num_layers=3):
        super().__init__()
        self.node_emb = nn.Embedding(num_atom_types, hidden)
        self.edge_emb = nn.Embedding(4, edge_dim)
        aggregators = ["mean", "min", "max", "std"]
        scalers = ["identity", "amplification", "attenuation"]
        self.convs = nn.ModuleList()
        self.batch_norms = nn.ModuleList()
        for _ in range(num_layers):
            conv = PNAConv(in_channels=hidden, out_channels=hidden, aggregators=aggregators, scalers=scalers,
                           deg=deg, edge_dim=edge_dim, towers=4, pre_layers=1, post_layers=1,
                           divide_input=False)
            self.convs.append(conv)
            self.batch_norms.append(nn.BatchNorm1d(hidden))
        self.mlp = nn.Sequential(nn.Linear(hidden, 8), nn.ReLU(), nn.Linear(8, 4), nn.ReLU(), nn.Linear(4, 1))

    def forward(self, x, edge_index, edge_attr, batch, y):
        x = self.node_emb(x.squeeze())
        edge_attr = self.edge_emb(edge_attr)
        for conv, batch_norm in zip(self.convs, self.batch_norms):
            h = F.relu(batch_norm(conv(x, edge_index, edge_attr)))
            x = h + x
        x = global_add_pool(x, batch)
        out = self.mlp(x)
        loss = (out.squeeze() - y).abs().mean()
        return out, loss


def _graphs():
    g = torch.Generator().manual_seed(1)
    sizes = [5, 4, 6]
    xs, edges, batch, offset = [], [], [], 0
    for graph, n in enumerate(sizes):
        ring = torch.arange(n)
        src = torch.cat([ring, (ring + 1) % n, torch.tensor([0])])
        dst = torch.cat([(ring + 1) % n, ring, torch.tensor([n // 2])])
        edges.append(torch.stack([src, dst]) + offset)
        xs.append(torch.randint(0, 6, (n, 1), generator=g))
        batch.append(torch.full((n,), graph))
        offset += n
    edge_index = torch.cat(edges, 1)
    return torch.cat(xs), edge_index, torch.randint(0, 4, (edge_index.size(1),), generator=g), torch.cat(batch)


def _degree_histogram(edge_index, num_nodes):
    d = torch.zeros(num_nodes, dtype=torch.long).index_add(0, edge_index[1], torch.ones_like(edge_index[1]))
    return torch.bincount(d)


torch.manual_seed(0)
_x, _edge_index, _edge_attr, _batch = _graphs()
model = Net(_degree_histogram(_edge_index, _x.size(0))).eval()
check_gradients = True


def example_inputs():
    y = torch.tensor([0.5, -1.0, 2.0])
    return _x, _edge_index, _edge_attr, _batch, y
