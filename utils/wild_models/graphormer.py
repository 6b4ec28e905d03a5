"""Graphormer as microsoft/Graphormer's `graphormer_layers.py` and its
collator write it, on a padded batch of graphs: shortest-path distances by
Floyd-Warshall as a Python loop over the intermediate node with
`torch.minimum` of broadcast sums (unreachable pairs left at a large
value and then mapped to the last spatial bucket by `masked_fill`), the
distances clamped into `spatial_pos`, centrality encoding from in- and
out-degrees (`adj.sum`) through embeddings with `padding_idx=0`, a
virtual graph token with its own distance embedding written into the
bias by slice assignment on a `clone`, the attention bias `repeat`ed
over heads and `unsqueeze`d, the padding `-inf` masked in via the
`x[:, :, 0].eq(0)` padding mask, multi-head attention reading the bias
by `attn_bias.view(bsz * heads, ...)`, pre-LN encoder layers, and the
graph token's final state as the graph representation; a regression
L1 loss."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def init_params(module, n_layers):
    if isinstance(module, nn.Linear):
        module.weight.data.normal_(mean=0.0, std=0.02 / math.sqrt(n_layers))
        if module.bias is not None:
            module.bias.data.zero_()
    if isinstance(module, nn.Embedding):
        module.weight.data.normal_(mean=0.0, std=0.02)


def floyd_warshall(adj, max_dist):
    n = adj.size(-1)
    eye = torch.eye(n, dtype=torch.bool, device=adj.device)
    dist = torch.where(adj.bool(), torch.ones_like(adj, dtype=torch.long),
                       torch.full_like(adj, 510, dtype=torch.long))
    dist = dist.masked_fill(eye, 0)
    for k in range(n):
        dist = torch.minimum(dist, dist[:, :, k:k + 1] + dist[:, k:k + 1, :])
    dist = dist.masked_fill(dist >= 510, max_dist)
    return dist.clamp(max=max_dist)


class GraphNodeFeature(nn.Module):
    def __init__(self, num_heads, num_atoms, num_in_degree, num_out_degree, hidden_dim, n_layers):
        super().__init__()
        self.num_heads = num_heads
        self.atom_encoder = nn.Embedding(num_atoms + 1, hidden_dim, padding_idx=0)
        self.in_degree_encoder = nn.Embedding(num_in_degree, hidden_dim, padding_idx=0)
        self.out_degree_encoder = nn.Embedding(num_out_degree, hidden_dim, padding_idx=0)
        self.graph_token = nn.Embedding(1, hidden_dim)
        self.apply(lambda module: init_params(module, n_layers=n_layers))

    def forward(self, x, in_degree, out_degree):
        n_graph, n_node = x.size()[:2]
        node_feature = self.atom_encoder(x).sum(dim=-2)
        node_feature = node_feature + self.in_degree_encoder(in_degree) + self.out_degree_encoder(out_degree)
        graph_token_feature = self.graph_token.weight.unsqueeze(0).repeat(n_graph, 1, 1)
        return torch.cat([graph_token_feature, node_feature], dim=1)


class GraphAttnBias(nn.Module):
    def __init__(self, num_heads, num_spatial, n_layers):
        super().__init__()
        self.num_heads = num_heads
        self.spatial_pos_encoder = nn.Embedding(num_spatial, num_heads, padding_idx=0)
        self.graph_token_virtual_distance = nn.Embedding(1, num_heads)
        self.apply(lambda module: init_params(module, n_layers=n_layers))

    def forward(self, attn_bias, spatial_pos):
        n_graph, n_node = attn_bias.size()[:2]
        graph_attn_bias = attn_bias.clone()
        graph_attn_bias = graph_attn_bias.unsqueeze(1).repeat(1, self.num_heads, 1, 1)
        spatial_pos_bias = self.spatial_pos_encoder(spatial_pos).permute(0, 3, 1, 2)
        graph_attn_bias[:, :, 1:, 1:] = graph_attn_bias[:, :, 1:, 1:] + spatial_pos_bias
        t = self.graph_token_virtual_distance.weight.view(1, self.num_heads, 1)
        graph_attn_bias[:, :, 1:, 0] = graph_attn_bias[:, :, 1:, 0] + t
        graph_attn_bias[:, :, 0, :] = graph_attn_bias[:, :, 0, :] + t
        graph_attn_bias = graph_attn_bias + attn_bias.unsqueeze(1)
        return graph_attn_bias


class MultiheadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.scaling = self.head_dim ** -0.5
        self.k_proj = nn.Linear(embed_dim, embed_dim)
        self.v_proj = nn.Linear(embed_dim, embed_dim)
        self.q_proj = nn.Linear(embed_dim, embed_dim)
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, query, attn_bias, key_padding_mask):
        tgt_len, bsz, embed_dim = query.size()
        q = self.q_proj(query) * self.scaling
        k = self.k_proj(query)
        v = self.v_proj(query)
        q = q.contiguous().view(tgt_len, bsz * self.num_heads, self.head_dim).transpose(0, 1)
        k = k.contiguous().view(-1, bsz * self.num_heads, self.head_dim).transpose(0, 1)
        v = v.contiguous().view(-1, bsz * self.num_heads, self.head_dim).transpose(0, 1)
        src_len = k.size(1)
        attn_weights = torch.bmm(q, k.transpose(1, 2))
        assert list(attn_weights.size()) == [bsz * self.num_heads, tgt_len, src_len]
        if attn_bias is not None:
            attn_weights += attn_bias.view(bsz * self.num_heads, tgt_len, src_len)
        if key_padding_mask is not None:
            attn_weights = attn_weights.view(bsz, self.num_heads, tgt_len, src_len)
            attn_weights = attn_weights.masked_fill(key_padding_mask.unsqueeze(1).unsqueeze(2).to(torch.bool),
                                                    float("-inf"))
            attn_weights = attn_weights.view(bsz * self.num_heads, tgt_len, src_len)
        attn_probs = F.softmax(attn_weights, dim=-1)
        attn = torch.bmm(attn_probs, v)
        attn = attn.transpose(0, 1).contiguous().view(tgt_len, bsz, embed_dim)
        return self.out_proj(attn)


class GraphormerGraphEncoderLayer(nn.Module):
    def __init__(self, embedding_dim, ffn_embedding_dim, num_attention_heads):
        super().__init__()
        self.self_attn = MultiheadAttention(embedding_dim, num_attention_heads)
        self.self_attn_layer_norm = nn.LayerNorm(embedding_dim)
        self.fc1 = nn.Linear(embedding_dim, ffn_embedding_dim)
        self.fc2 = nn.Linear(ffn_embedding_dim, embedding_dim)
        self.final_layer_norm = nn.LayerNorm(embedding_dim)

    def forward(self, x, self_attn_bias=None, self_attn_padding_mask=None):
        residual = x
        x = self.self_attn_layer_norm(x)
        x = self.self_attn(x, attn_bias=self_attn_bias, key_padding_mask=self_attn_padding_mask)
        x = residual + x
        residual = x
        x = self.final_layer_norm(x)
        x = self.fc2(F.gelu(self.fc1(x)))
        return residual + x


class Graphormer(nn.Module):
    def __init__(self, num_atoms=16, num_in_degree=8, num_out_degree=8, num_spatial=8, num_layers=2,
                 embedding_dim=32, ffn_embedding_dim=64, num_heads=4):
        super().__init__()
        self.num_spatial = num_spatial
        self.graph_node_feature = GraphNodeFeature(num_heads, num_atoms, num_in_degree, num_out_degree,
                                                   embedding_dim, num_layers)
        self.graph_attn_bias = GraphAttnBias(num_heads, num_spatial, num_layers)
        self.emb_layer_norm = nn.LayerNorm(embedding_dim)
        self.layers = nn.ModuleList([GraphormerGraphEncoderLayer(embedding_dim, ffn_embedding_dim, num_heads)
                                     for _ in range(num_layers)])
        self.lm_head_transform_weight = nn.Linear(embedding_dim, embedding_dim)
        self.layer_norm = nn.LayerNorm(embedding_dim)
        self.embed_out = nn.Linear(embedding_dim, 1)
        self.num_in_degree = num_in_degree

    def preprocess(self, x, adj, node_mask):
        n_graph, n_node = x.size()[:2]
        in_degree = (adj.sum(dim=1).long() + 1).masked_fill(~node_mask, 0).clamp(max=self.num_in_degree - 1)
        out_degree = (adj.sum(dim=2).long() + 1).masked_fill(~node_mask, 0).clamp(max=self.num_in_degree - 1)
        spatial_pos = floyd_warshall(adj, self.num_spatial - 1) + 1
        pair_mask = node_mask[:, :, None] & node_mask[:, None, :]
        spatial_pos = spatial_pos.masked_fill(~pair_mask, 0)
        attn_bias = torch.zeros(n_graph, n_node + 1, n_node + 1, dtype=torch.float)
        return in_degree, out_degree, spatial_pos, attn_bias

    def forward(self, x, adj, node_mask, target):
        in_degree, out_degree, spatial_pos, attn_bias = self.preprocess(x, adj, node_mask)
        n_graph, n_node = x.size()[:2]
        padding_mask = (x[:, :, 0]).eq(0)
        padding_mask_cls = torch.zeros(n_graph, 1, device=padding_mask.device, dtype=padding_mask.dtype)
        padding_mask = torch.cat((padding_mask_cls, padding_mask), dim=1)
        h = self.graph_node_feature(x, in_degree, out_degree)
        bias = self.graph_attn_bias(attn_bias, spatial_pos)
        h = self.emb_layer_norm(h)
        h = h.transpose(0, 1)
        for layer in self.layers:
            h = layer(h, self_attn_padding_mask=padding_mask, self_attn_bias=bias)
        h = h.transpose(0, 1)
        h = self.layer_norm(F.gelu(self.lm_head_transform_weight(h)))
        pred = self.embed_out(h[:, 0, :]).squeeze(-1)
        loss = F.l1_loss(pred, target, reduction="sum") / target.size(0)
        return pred, loss


torch.manual_seed(0)
model = Graphormer().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    n_nodes = [6, 4, 5]
    n = max(n_nodes)
    x = torch.zeros(3, n, 2, dtype=torch.long)
    adj = torch.zeros(3, n, n)
    node_mask = torch.zeros(3, n, dtype=torch.bool)
    for i, m in enumerate(n_nodes):
        x[i, :m] = torch.randint(1, 16, (m, 2), generator=g)
        node_mask[i, :m] = True
        for a in range(m - 1):
            adj[i, a, a + 1] = adj[i, a + 1, a] = 1.0
        if m > 4:
            adj[i, 0, m - 1] = adj[i, m - 1, 0] = 1.0
    target = torch.randn(3, generator=g)
    return x, adj, node_mask, target
