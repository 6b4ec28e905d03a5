"""GraphSAGE and GIN layers written without a graph library, as repos that
avoid torch_geometric write them: `edge_index` as a [2, E] long tensor
with self loops removed by a boolean mask, mean aggregation by
`Tensor.scatter_reduce(0, index, src, reduce="mean", include_self=False)`
over an expanded index, SAGE's root weight and `F.normalize(out, p=2.,
dim=-1)`, GIN's `(1 + eps) * x + sum` with a learnable eps and the sum by
`index_add_`, max aggregation by `scatter_reduce("amax")`, graph readout
per graph of a `batch` vector by `global_add_pool` / `global_mean_pool`
(`torch.zeros(num_graphs, ...).index_add_` divided by `torch.bincount`),
`num_graphs = int(batch.max()) + 1`, jumping-knowledge concatenation and
a graph-classification cross-entropy."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def remove_self_loops(edge_index):
    mask = edge_index[0] != edge_index[1]
    return edge_index[:, mask]


def scatter(src, index, dim_size, reduce="sum"):
    index = index.view(-1, 1).expand_as(src)
    out = torch.zeros((dim_size, src.size(1)), dtype=src.dtype, device=src.device)
    if reduce == "sum":
        return out.scatter_add_(0, index, src)
    return out.scatter_reduce(0, index, src, reduce=reduce, include_self=False)


class SAGEConv(nn.Module):
    def __init__(self, in_channels, out_channels, aggr="mean", normalize=True, root_weight=True):
        super().__init__()
        self.aggr, self.normalize, self.root_weight = aggr, normalize, root_weight
        self.lin_l = nn.Linear(in_channels, out_channels, bias=True)
        if self.root_weight:
            self.lin_r = nn.Linear(in_channels, out_channels, bias=False)

    def forward(self, x, edge_index):
        row, col = edge_index
        msg = x.index_select(0, row)
        out = scatter(msg, col, x.size(0), reduce=self.aggr)
        out = self.lin_l(out)
        if self.root_weight:
            out = out + self.lin_r(x)
        if self.normalize:
            out = F.normalize(out, p=2.0, dim=-1)
        return out


class GINConv(nn.Module):
    def __init__(self, nn_module, eps=0.0, train_eps=True):
        super().__init__()
        self.nn = nn_module
        self.initial_eps = eps
        if train_eps:
            self.eps = nn.Parameter(torch.Tensor([eps]))
        else:
            self.register_buffer("eps", torch.Tensor([eps]))

    def forward(self, x, edge_index):
        row, col = edge_index
        out = torch.zeros_like(x).index_add_(0, col, x[row])
        out = out + (1 + self.eps) * x
        return self.nn(out)


def global_add_pool(x, batch, size=None):
    size = int(batch.max().item() + 1) if size is None else size
    return torch.zeros(size, x.size(1), dtype=x.dtype).index_add_(0, batch, x)


def global_mean_pool(x, batch, size=None):
    size = int(batch.max().item() + 1) if size is None else size
    count = torch.bincount(batch, minlength=size).clamp(min=1).to(x.dtype)
    return global_add_pool(x, batch, size) / count.view(-1, 1)


class GraphClassifier(nn.Module):
    def __init__(self, in_channels=6, hidden=16, num_classes=3):
        super().__init__()
        self.sage1 = SAGEConv(in_channels, hidden)
        self.sage2 = SAGEConv(hidden, hidden, aggr="amax", normalize=False)
        self.gin = GINConv(nn.Sequential(nn.Linear(hidden, hidden), nn.BatchNorm1d(hidden), nn.ReLU(),
                                         nn.Linear(hidden, hidden)))
        self.lin = nn.Linear(3 * hidden * 2, num_classes)

    def forward(self, x, edge_index, batch, y):
        edge_index = remove_self_loops(edge_index)
        xs = []
        x = F.relu(self.sage1(x, edge_index))
        xs.append(x)
        x = F.relu(self.sage2(x, edge_index))
        xs.append(x)
        x = self.gin(x, edge_index)
        xs.append(x)
        h = torch.cat(xs, dim=-1)
        num_graphs = int(batch.max()) + 1
        pooled = torch.cat([global_add_pool(h, batch, num_graphs), global_mean_pool(h, batch, num_graphs)], -1)
        logits = self.lin(F.dropout(pooled, p=0.5, training=self.training))
        return F.log_softmax(logits, dim=-1), F.cross_entropy(logits, y)


torch.manual_seed(0)
model = GraphClassifier().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    sizes = [5, 4, 6]
    batch = torch.cat([torch.full((n,), i, dtype=torch.long) for i, n in enumerate(sizes)])
    starts = [0, 5, 9]
    edges = []
    for start, n in zip(starts, sizes):
        src = torch.randint(0, n, (2 * n,), generator=g) + start
        dst = torch.randint(0, n, (2 * n,), generator=g) + start
        edges.append(torch.stack([src, dst]))
    edge_index = torch.cat(edges, 1)
    return torch.randn(15, 6, generator=g), edge_index, batch, torch.tensor([0, 2, 1])
