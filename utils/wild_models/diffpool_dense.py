"""Hierarchical graph pooling (DiffPool) as PyG's dense layers are used,
with `to_dense_batch` and `to_dense_adj` written in plain torch as small
projects copy them: node counts by `scatter_add_` of ones over the batch
vector, `cum_nodes` by `cat([zeros(1), cumsum])`, each node's slot
`arange(num_nodes) - cum_nodes[batch]` and a flat `index` written into a
`new_full` buffer and a boolean mask; the adjacency by `index_put_` with
`accumulate=True` at (batch, row, col); DenseSAGEConv (`adj @ x` divided
by clamped degrees, the mask multiplied in), a GNN of three of them with
BatchNorm1d applied over the flattened nodes by a `bn(i, x)` helper and
a `lin` skip concatenated, `dense_diff_pool` with the assignment softmax,
`s^T x`, `s^T adj s`, the link loss `adj - s s^T` normed and divided by
numel, and the entropy loss; two pooling levels, a mean readout and a
log_softmax classifier with NLL loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def to_dense_batch(x, batch, fill_value=0.0, max_num_nodes=None, batch_size=None):
    if batch_size is None:
        batch_size = int(batch.max()) + 1
    num_nodes = batch.new_zeros(batch_size).scatter_add_(0, batch, torch.ones_like(batch))
    cum_nodes = torch.cat([batch.new_zeros(1), num_nodes.cumsum(dim=0)])
    if max_num_nodes is None:
        max_num_nodes = int(num_nodes.max())
    idx = torch.arange(batch.size(0), device=x.device)
    idx = (idx - cum_nodes[batch]) + (batch * max_num_nodes)
    size = [batch_size * max_num_nodes] + list(x.size())[1:]
    out = x.new_full(size, fill_value)
    out[idx] = x
    out = out.view([batch_size, max_num_nodes] + list(x.size())[1:])
    mask = torch.zeros(batch_size * max_num_nodes, dtype=torch.bool, device=x.device)
    mask[idx] = 1
    mask = mask.view(batch_size, max_num_nodes)
    return out, mask


def to_dense_adj(edge_index, batch, batch_size, max_num_nodes):
    one = batch.new_ones(batch.size(0))
    num_nodes = batch.new_zeros(batch_size).scatter_add_(0, batch, one)
    cum_nodes = torch.cat([batch.new_zeros(1), num_nodes.cumsum(dim=0)])
    idx0 = batch[edge_index[0]]
    idx1 = edge_index[0] - cum_nodes[batch][edge_index[0]]
    idx2 = edge_index[1] - cum_nodes[batch][edge_index[1]]
    edge_attr = torch.ones(edge_index.size(1), device=edge_index.device)
    adj = torch.zeros(batch_size, max_num_nodes, max_num_nodes, device=edge_index.device)
    adj.index_put_((idx0, idx1, idx2), edge_attr, accumulate=True)
    return adj


class DenseSAGEConv(nn.Module):
    def __init__(self, in_channels, out_channels, normalize=False, bias=True):
        super().__init__()
        self.normalize = normalize
        self.lin_rel = nn.Linear(in_channels, out_channels, bias=False)
        self.lin_root = nn.Linear(in_channels, out_channels, bias=bias)

    def forward(self, x, adj, mask=None):
        x = x.unsqueeze(0) if x.dim() == 2 else x
        adj = adj.unsqueeze(0) if adj.dim() == 2 else adj
        B, N, _ = adj.size()
        out = torch.matmul(adj, x)
        out = out / adj.sum(dim=-1, keepdim=True).clamp(min=1)
        out = self.lin_rel(out) + self.lin_root(x)
        if self.normalize:
            out = F.normalize(out, p=2.0, dim=-1)
        if mask is not None:
            out = out * mask.view(B, N, 1).to(x.dtype)
        return out


def dense_diff_pool(x, adj, s, mask=None, normalize=True):
    x = x.unsqueeze(0) if x.dim() == 2 else x
    adj = adj.unsqueeze(0) if adj.dim() == 2 else adj
    s = s.unsqueeze(0) if s.dim() == 2 else s
    batch_size, num_nodes, _ = x.size()
    s = torch.softmax(s, dim=-1)
    if mask is not None:
        mask = mask.view(batch_size, num_nodes, 1).to(x.dtype)
        x, s = x * mask, s * mask
    out = torch.matmul(s.transpose(1, 2), x)
    out_adj = torch.matmul(torch.matmul(s.transpose(1, 2), adj), s)
    link_loss = adj - torch.matmul(s, s.transpose(1, 2))
    link_loss = torch.norm(link_loss, p=2)
    if normalize is True:
        link_loss = link_loss / adj.numel()
    ent_loss = (-s * torch.log(s + 1e-15)).sum(dim=-1).mean()
    return out, out_adj, link_loss, ent_loss


class GNN(nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels, normalize=False, lin=True):
        super().__init__()
        self.conv1 = DenseSAGEConv(in_channels, hidden_channels, normalize)
        self.bn1 = nn.BatchNorm1d(hidden_channels)
        self.conv2 = DenseSAGEConv(hidden_channels, hidden_channels, normalize)
        self.bn2 = nn.BatchNorm1d(hidden_channels)
        self.conv3 = DenseSAGEConv(hidden_channels, out_channels, normalize)
        self.bn3 = nn.BatchNorm1d(out_channels)
        if lin is True:
            self.lin = nn.Linear(2 * hidden_channels + out_channels, out_channels)
        else:
            self.lin = None

    def bn(self, i, x):
        batch_size, num_nodes, num_channels = x.size()
        x = x.view(-1, num_channels)
        x = getattr(self, f"bn{i}")(x)
        x = x.view(batch_size, num_nodes, num_channels)
        return x

    def forward(self, x, adj, mask=None):
        x0 = x
        x1 = self.bn(1, self.conv1(x0, adj, mask).relu())
        x2 = self.bn(2, self.conv2(x1, adj, mask).relu())
        x3 = self.bn(3, self.conv3(x2, adj, mask).relu())
        x = torch.cat([x1, x2, x3], dim=-1)
        if self.lin is not None:
            x = self.lin(x).relu()
        return x


class DiffPoolNet(nn.Module):
    def __init__(self, num_features=5, num_classes=3, max_nodes=12, hidden=16):
        super().__init__()
        num_nodes = (max_nodes * 1 + 1) // 2
        self.gnn1_pool = GNN(num_features, hidden, num_nodes)
        self.gnn1_embed = GNN(num_features, hidden, hidden, lin=False)
        num_nodes = (num_nodes + 1) // 2
        self.gnn2_pool = GNN(3 * hidden, hidden, num_nodes)
        self.gnn2_embed = GNN(3 * hidden, hidden, hidden, lin=False)
        self.gnn3_embed = GNN(3 * hidden, hidden, hidden, lin=False)
        self.lin1 = nn.Linear(3 * hidden, hidden)
        self.lin2 = nn.Linear(hidden, num_classes)
        self.max_nodes = max_nodes

    def forward(self, x, edge_index, batch, y, batch_size: int):
        x, mask = to_dense_batch(x, batch, max_num_nodes=self.max_nodes, batch_size=batch_size)
        adj = to_dense_adj(edge_index, batch, batch_size, self.max_nodes)

        s = self.gnn1_pool(x, adj, mask)
        x = self.gnn1_embed(x, adj, mask)
        x, adj, l1, e1 = dense_diff_pool(x, adj, s, mask)

        s = self.gnn2_pool(x, adj)
        x = self.gnn2_embed(x, adj)
        x, adj, l2, e2 = dense_diff_pool(x, adj, s)

        x = self.gnn3_embed(x, adj)
        x = x.mean(dim=1)
        x = self.lin1(x).relu()
        x = self.lin2(x)
        out = F.log_softmax(x, dim=-1)
        loss = F.nll_loss(out, y) + l1 + l2 + e1 + e2
        return out, loss, l1 + l2, e1 + e2


torch.manual_seed(0)
model = DiffPoolNet().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    sizes = [7, 12, 9]
    batch = torch.cat([torch.full((n,), i, dtype=torch.long) for i, n in enumerate(sizes)])
    edges, start = [], 0
    for n in sizes:
        src = torch.randint(0, n, (2 * n,), generator=g) + start
        dst = torch.randint(0, n, (2 * n,), generator=g) + start
        edges.append(torch.stack([torch.cat([src, dst]), torch.cat([dst, src])]))
        start += n
    x = torch.randn(sum(sizes), 5, generator=g)
    return x, torch.cat(edges, dim=1), batch, torch.tensor([0, 2, 1]), len(sizes)
