"""Graph neural network layers written the way PyG-free GNN code writes
them: a GCN layer with self loops, degrees by scatter_add over an edge index
and symmetric normalization, messages gathered by index and summed with
index_add_; a GraphSAGE mean aggregator with scatter_reduce; a GAT-style
attention with a per-node softmax through scatter_reduce('amax'); and
global mean pooling over a batch vector."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def add_self_loops(edge_index, num_nodes):
    loop = torch.arange(num_nodes, device=edge_index.device)
    loop = loop.unsqueeze(0).repeat(2, 1)
    return torch.cat([edge_index, loop], dim=1)


class GCNConv(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.lin = nn.Linear(in_channels, out_channels, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_channels))

    def forward(self, x, edge_index):
        num_nodes = x.size(0)
        edge_index = add_self_loops(edge_index, num_nodes)
        row, col = edge_index
        deg = torch.zeros(num_nodes, dtype=x.dtype, device=x.device)
        deg = deg.scatter_add(0, col, torch.ones_like(col, dtype=x.dtype))
        deg_inv_sqrt = deg.pow(-0.5)
        deg_inv_sqrt[deg_inv_sqrt == float("inf")] = 0
        norm = deg_inv_sqrt[row] * deg_inv_sqrt[col]
        x = self.lin(x)
        messages = norm.view(-1, 1) * x[row]
        out = torch.zeros_like(x).index_add_(0, col, messages)
        return out + self.bias


class SAGEConv(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.lin_l = nn.Linear(in_channels, out_channels)
        self.lin_r = nn.Linear(in_channels, out_channels, bias=False)

    def forward(self, x, edge_index):
        src, dst = edge_index[0], edge_index[1]
        index = dst.unsqueeze(-1).expand(-1, x.size(1))
        agg = torch.zeros_like(x).scatter_reduce(0, index, x[src], reduce="mean", include_self=False)
        return self.lin_l(agg) + self.lin_r(x)


class GATConv(nn.Module):
    def __init__(self, in_channels, out_channels, heads=2):
        super().__init__()
        self.heads, self.out_channels = heads, out_channels
        self.lin = nn.Linear(in_channels, heads * out_channels, bias=False)
        self.att_src = nn.Parameter(torch.randn(1, heads, out_channels) * 0.1)
        self.att_dst = nn.Parameter(torch.randn(1, heads, out_channels) * 0.1)

    def forward(self, x, edge_index):
        H, C = self.heads, self.out_channels
        n = x.size(0)
        x = self.lin(x).view(-1, H, C)
        src, dst = edge_index
        alpha = (x * self.att_src).sum(-1)[src] + (x * self.att_dst).sum(-1)[dst]
        alpha = F.leaky_relu(alpha, 0.2)
        amax = alpha.new_full((n, H), float("-inf")).scatter_reduce(
            0, dst.unsqueeze(-1).expand_as(alpha), alpha, reduce="amax", include_self=True)
        alpha = (alpha - amax[dst]).exp()
        denom = alpha.new_zeros((n, H)).index_add_(0, dst, alpha)
        alpha = alpha / (denom[dst] + 1e-16)
        out = x.new_zeros((n, H, C)).index_add_(0, dst, x[src] * alpha.unsqueeze(-1))
        return out.mean(dim=1)


def global_mean_pool(x, batch, size):
    sums = x.new_zeros(size, x.size(1)).index_add_(0, batch, x)
    counts = torch.bincount(batch, minlength=size).clamp(min=1).to(x.dtype)
    return sums / counts.unsqueeze(-1)


class GNN(nn.Module):
    def __init__(self, in_channels=8, hidden=16, classes=3, num_graphs=2):
        super().__init__()
        self.num_graphs = num_graphs
        self.conv1 = GCNConv(in_channels, hidden)
        self.conv2 = SAGEConv(hidden, hidden)
        self.conv3 = GATConv(hidden, hidden)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x, edge_index, batch):
        x = F.relu(self.conv1(x, edge_index))
        x = F.relu(self.conv2(x, edge_index))
        x = F.elu(self.conv3(x, edge_index))
        return self.head(global_mean_pool(x, batch, self.num_graphs))


torch.manual_seed(0)
model = GNN().eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(10, 8, generator=g)
    src = torch.tensor([0, 1, 2, 3, 4, 1, 5, 6, 7, 8, 9, 6])
    dst = torch.tensor([1, 2, 3, 4, 0, 0, 6, 7, 8, 9, 5, 8])
    batch = torch.tensor([0] * 5 + [1] * 5)
    return x, torch.stack([src, dst]), batch
