"""R-GCN link prediction as PyG's RGCNConv and its link-prediction example
write it: basis decomposition of the relation weights (`comp @ weight.view(
num_bases, -1)` viewed back per relation), a Python loop over relations
taking each relation's edges by a boolean mask on `edge_type == i`
(`edge_index[:, mask]`), mean aggregation per relation by `index_add` with
in-degree counts clamped to 1, an input of node ids (no features:
`x is None` selects the one-hot path, the weight indexed by node id), the
root weight and bias, a two-layer encoder with ReLU, a DistMult decoder
with a relation embedding Parameter (`torch.sum(z[src] * rel[r] * z[dst],
dim=1)`), negatives given as corrupted tails, BCE-with-logits over the cat'ed
positive and negative scores, and the regularisation `z.pow(2).mean() +
rel_emb.pow(2).mean()`."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def masked_edge_index(edge_index, edge_mask):
    return edge_index[:, edge_mask]


class RGCNConv(nn.Module):
    def __init__(self, in_channels, out_channels, num_relations, num_bases=None, aggr="mean", root_weight=True,
                 bias=True):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.num_relations = num_relations
        self.num_bases = num_bases
        self.aggr = aggr
        if num_bases is not None:
            self.weight = nn.Parameter(torch.empty(num_bases, in_channels, out_channels))
            self.comp = nn.Parameter(torch.empty(num_relations, num_bases))
        else:
            self.weight = nn.Parameter(torch.empty(num_relations, in_channels, out_channels))
            self.register_parameter("comp", None)
        if root_weight:
            self.root = nn.Parameter(torch.empty(in_channels, out_channels))
        else:
            self.register_parameter("root", None)
        if bias:
            self.bias = nn.Parameter(torch.empty(out_channels))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.xavier_uniform_(self.weight)
        if self.comp is not None:
            nn.init.xavier_uniform_(self.comp)
        if self.root is not None:
            nn.init.xavier_uniform_(self.root)
        if self.bias is not None:
            nn.init.zeros_(self.bias)

    def propagate(self, edge_index, x, size):
        src, dst = edge_index[0], edge_index[1]
        msg = x[src]
        out = msg.new_zeros(size, msg.size(-1)).index_add(0, dst, msg)
        if self.aggr == "mean":
            count = msg.new_zeros(size).index_add(0, dst, msg.new_ones(dst.numel()))
            out = out / count.clamp(min=1).unsqueeze(-1)
        return out

    def forward(self, x, edge_index, edge_type):
        x_l = x
        if x_l is None:
            raise ValueError("use forward_ids for featureless nodes")
        size = x.size(0)
        out = torch.zeros(size, self.out_channels, device=x.device)
        weight = self.weight
        if self.num_bases is not None:
            weight = (self.comp @ weight.view(self.num_bases, -1)).view(self.num_relations, self.in_channels,
                                                                          self.out_channels)
        for i in range(self.num_relations):
            tmp = masked_edge_index(edge_index, edge_type == i)
            if x_l.dtype == torch.long:
                out = out + self.propagate(tmp, weight[i, x_l], size)
            else:
                h = self.propagate(tmp, x_l, size)
                out = out + (h @ weight[i])
        root = self.root
        if root is not None:
            out = out + (root[x] if x.dtype == torch.long else x @ root)
        if self.bias is not None:
            out = out + self.bias
        return out


class RGCNEncoder(nn.Module):
    def __init__(self, num_nodes, hidden_channels, num_relations):
        super().__init__()
        self.node_emb = nn.Parameter(torch.empty(num_nodes, hidden_channels))
        self.conv1 = RGCNConv(hidden_channels, hidden_channels, num_relations, num_bases=3)
        self.conv2 = RGCNConv(hidden_channels, hidden_channels, num_relations, num_bases=3)
        nn.init.xavier_uniform_(self.node_emb)

    def forward(self, edge_index, edge_type):
        x = self.node_emb
        x = self.conv1(x, edge_index, edge_type).relu_()
        x = F.dropout(x, p=0.2, training=self.training)
        x = self.conv2(x, edge_index, edge_type)
        return x


class DistMultDecoder(nn.Module):
    def __init__(self, num_relations, hidden_channels):
        super().__init__()
        self.rel_emb = nn.Parameter(torch.empty(num_relations, hidden_channels))
        nn.init.xavier_uniform_(self.rel_emb)

    def forward(self, z, edge_index, edge_type):
        z_src, z_dst = z[edge_index[0]], z[edge_index[1]]
        rel = self.rel_emb[edge_type]
        return torch.sum(z_src * rel * z_dst, dim=1)


class GAE(nn.Module):
    def __init__(self, num_nodes=12, hidden_channels=8, num_relations=4):
        super().__init__()
        self.encoder = RGCNEncoder(num_nodes, hidden_channels, num_relations)
        self.decoder = DistMultDecoder(num_relations // 2, hidden_channels)

    def forward(self, edge_index, edge_type, train_edge_index, train_edge_type, neg_tails):
        z = self.encoder(edge_index, edge_type)
        pos_out = self.decoder(z, train_edge_index, train_edge_type)
        neg_edge_index = torch.stack([train_edge_index[0], neg_tails])
        neg_out = self.decoder(z, neg_edge_index, train_edge_type)
        out = torch.cat([pos_out, neg_out])
        gt = torch.cat([torch.ones_like(pos_out), torch.zeros_like(neg_out)])
        cross_entropy_loss = F.binary_cross_entropy_with_logits(out, gt)
        reg_loss = z.pow(2).mean() + self.decoder.rel_emb.pow(2).mean()
        loss = cross_entropy_loss + 1e-2 * reg_loss
        return loss, z


torch.manual_seed(0)
model = GAE().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    num_edges = 20
    src = torch.randint(0, 12, (num_edges,), generator=g)
    dst = torch.randint(0, 12, (num_edges,), generator=g)
    rel = torch.randint(0, 2, (num_edges,), generator=g)
    # inverse relations as the example adds them
    edge_index = torch.cat([torch.stack([src, dst]), torch.stack([dst, src])], 1)
    edge_type = torch.cat([rel, rel + 2])
    neg_tails = torch.randint(0, 12, (num_edges,), generator=g)
    return edge_index, edge_type, torch.stack([src, dst]), rel, neg_tails
