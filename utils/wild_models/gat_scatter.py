"""A GAT layer as graph libraries' pure-torch fallbacks write it, without
torch_scatter: per-head source and target attention logits by `(x * att).sum(-1)`,
gathered per edge through `edge_index`, LeakyReLU, a segment softmax over
each target's incoming edges using `scatter_reduce(..., "amax",
include_self=False)` for the max, `exp`, an `index_add_` for the
denominator, attention dropout, messages aggregated by `index_add_`,
self-loops added with `torch.arange`, heads concatenated then averaged in the
last layer, and a node-classification NLL loss over a train mask."""
import torch
import torch.nn.functional as F
from torch import nn


def add_self_loops(edge_index, num_nodes):
    loop_index = torch.arange(0, num_nodes, dtype=torch.long, device=edge_index.device)
    loop_index = loop_index.unsqueeze(0).repeat(2, 1)
    return torch.cat([edge_index, loop_index], dim=1)


def scatter_softmax(src, index, num_nodes):
    # src: [E, H]; softmax over the edges that share a target node
    out_shape = (num_nodes,) + tuple(src.shape[1:])
    idx = index.view(-1, 1).expand_as(src)
    src_max = torch.zeros(out_shape, dtype=src.dtype, device=src.device)
    src_max = src_max.scatter_reduce(0, idx, src.detach(), reduce="amax", include_self=False)
    out = (src - src_max.index_select(0, index)).exp()
    out_sum = torch.zeros(out_shape, dtype=src.dtype, device=src.device).index_add_(0, index, out)
    return out / (out_sum.index_select(0, index) + 1e-16)


class GATConv(nn.Module):
    def __init__(self, in_channels, out_channels, heads=1, concat=True, negative_slope=0.2, dropout=0.0):
        super().__init__()
        self.heads, self.out_channels, self.concat = heads, out_channels, concat
        self.negative_slope, self.dropout = negative_slope, dropout
        self.lin = nn.Linear(in_channels, heads * out_channels, bias=False)
        self.att_src = nn.Parameter(torch.empty(1, heads, out_channels))
        self.att_dst = nn.Parameter(torch.empty(1, heads, out_channels))
        self.bias = nn.Parameter(torch.zeros(heads * out_channels if concat else out_channels))
        nn.init.xavier_uniform_(self.lin.weight)
        nn.init.xavier_uniform_(self.att_src)
        nn.init.xavier_uniform_(self.att_dst)

    def forward(self, x, edge_index):
        N, H, C = x.size(0), self.heads, self.out_channels
        edge_index = add_self_loops(edge_index, N)
        x = self.lin(x).view(-1, H, C)
        alpha_src = (x * self.att_src).sum(dim=-1)
        alpha_dst = (x * self.att_dst).sum(dim=-1)
        src, dst = edge_index[0], edge_index[1]
        alpha = alpha_src[src] + alpha_dst[dst]
        alpha = F.leaky_relu(alpha, self.negative_slope)
        alpha = scatter_softmax(alpha, dst, N)
        alpha = F.dropout(alpha, p=self.dropout, training=self.training)
        msg = x[src] * alpha.unsqueeze(-1)
        out = torch.zeros(N, H, C, dtype=x.dtype, device=x.device).index_add_(0, dst, msg)
        if self.concat:
            out = out.view(-1, H * C)
        else:
            out = out.mean(dim=1)
        return out + self.bias


class GAT(nn.Module):
    def __init__(self, in_dim=12, hidden=8, heads=4, num_classes=3, dropout=0.6):
        super().__init__()
        self.dropout = dropout
        self.conv1 = GATConv(in_dim, hidden, heads=heads, dropout=dropout)
        self.conv2 = GATConv(hidden * heads, num_classes, heads=1, concat=False, dropout=dropout)

    def forward(self, x, edge_index, y, train_mask):
        x = F.dropout(x, p=self.dropout, training=self.training)
        x = F.elu(self.conv1(x, edge_index))
        x = F.dropout(x, p=self.dropout, training=self.training)
        x = self.conv2(x, edge_index)
        log_probs = F.log_softmax(x, dim=-1)
        loss = F.nll_loss(log_probs[train_mask], y[train_mask])
        return log_probs, loss


torch.manual_seed(0)
model = GAT().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    n, e = 10, 30
    edge_index = torch.randint(0, n, (2, e), generator=g)
    y = torch.randint(0, 3, (n,), generator=g)
    train_mask = torch.zeros(n, dtype=torch.bool)
    train_mask[:6] = True
    return torch.randn(n, 12, generator=g), edge_index, y, train_mask
