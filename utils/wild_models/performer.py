"""Performer's FAVOR+ attention as lucidrains/performer-pytorch writes it:
an orthogonal random feature matrix built by QR of Gaussian blocks and
scaled by chi-distributed norms, kept as a buffer; softmax_kernel with the
data normalizer d^-1/4, the diagonal term |x|^2/2, and the stabilizing max
(over the last dim for queries, over everything for keys, as amax with
keepdim); non-causal linear attention by einsum with the denominator
1 / (q . k_sum); and a causal variant by cumulative sums of the outer
products (einsum then cumsum over time)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def orthogonal_matrix_chunk(cols, generator):
    unstructured_block = torch.randn((cols, cols), generator=generator)
    q, r = torch.linalg.qr(unstructured_block.cpu(), mode="reduced")
    return q.t()


def gaussian_orthogonal_random_matrix(nb_rows, nb_columns, generator, scaling=0):
    nb_full_blocks = int(nb_rows / nb_columns)
    block_list = []
    for _ in range(nb_full_blocks):
        block_list.append(orthogonal_matrix_chunk(nb_columns, generator))
    remaining_rows = nb_rows - nb_full_blocks * nb_columns
    if remaining_rows > 0:
        q = orthogonal_matrix_chunk(nb_columns, generator)
        block_list.append(q[:remaining_rows])
    final_matrix = torch.cat(block_list)
    if scaling == 0:
        multiplier = torch.randn((nb_rows, nb_columns), generator=generator).norm(dim=1)
    else:
        multiplier = math.sqrt(float(nb_columns)) * torch.ones((nb_rows,))
    return torch.diag(multiplier) @ final_matrix


def softmax_kernel(data, *, projection_matrix, is_query, normalize_data=True, eps=1e-4):
    b, h, *_ = data.shape
    data_normalizer = (data.shape[-1] ** -0.25) if normalize_data else 1.
    ratio = (projection_matrix.shape[0] ** -0.5)
    projection = projection_matrix.unsqueeze(0).unsqueeze(0).expand(b, h, -1, -1).type_as(data)
    data_dash = torch.einsum("...id,...jd->...ij", (data_normalizer * data), projection)
    diag_data = data ** 2
    diag_data = torch.sum(diag_data, dim=-1)
    diag_data = (diag_data / 2.0) * (data_normalizer ** 2)
    diag_data = diag_data.unsqueeze(dim=-1)
    if is_query:
        data_dash = ratio * (torch.exp(data_dash - diag_data -
                                       torch.amax(data_dash, dim=-1, keepdim=True).detach()) + eps)
    else:
        data_dash = ratio * (torch.exp(data_dash - diag_data -
                                       torch.amax(data_dash, dim=(-1, -2), keepdim=True).detach()) + eps)
    return data_dash.type_as(data)


def linear_attention(q, k, v):
    k_cumsum = k.sum(dim=-2)
    D_inv = 1. / torch.einsum("...nd,...d->...n", q, k_cumsum.type_as(q))
    context = torch.einsum("...nd,...ne->...de", k, v)
    return torch.einsum("...de,...nd,...n->...ne", context, q, D_inv)


def causal_linear_attention_noncuda(q, k, v, eps=1e-6):
    k_cumsum = k.cumsum(dim=-2)
    D_inv = 1. / torch.einsum("...nd,...nd->...n", q, k_cumsum.type_as(q) + eps)
    context = torch.einsum("...nd,...ne->...nde", k, v)
    context = context.cumsum(dim=-3)
    return torch.einsum("...nde,...nd,...n->...ne", context, q, D_inv)


class FastAttention(nn.Module):
    def __init__(self, dim_heads, nb_features=None, causal=False, seed=0):
        super().__init__()
        nb_features = nb_features if nb_features is not None else int(dim_heads * math.log(dim_heads))
        self.dim_heads = dim_heads
        self.nb_features = nb_features
        g = torch.Generator().manual_seed(seed)
        projection_matrix = gaussian_orthogonal_random_matrix(nb_features, dim_heads, g)
        self.register_buffer("projection_matrix", projection_matrix)
        self.causal = causal

    def forward(self, q, k, v):
        q = softmax_kernel(q, is_query=True, projection_matrix=self.projection_matrix)
        k = softmax_kernel(k, is_query=False, projection_matrix=self.projection_matrix)
        attn_fn = linear_attention if not self.causal else causal_linear_attention_noncuda
        return attn_fn(q, k, v)


class SelfAttention(nn.Module):
    def __init__(self, dim, heads, causal, seed):
        super().__init__()
        self.heads = heads
        dim_head = dim // heads
        self.fast_attention = FastAttention(dim_head, causal=causal, seed=seed)
        self.to_q = nn.Linear(dim, dim)
        self.to_k = nn.Linear(dim, dim)
        self.to_v = nn.Linear(dim, dim)
        self.to_out = nn.Linear(dim, dim)

    def forward(self, x, mask=None):
        b, n, _, h = *x.shape, self.heads
        q, k, v = self.to_q(x), self.to_k(x), self.to_v(x)
        q, k, v = map(lambda t: t.view(b, n, h, -1).transpose(1, 2), (q, k, v))
        if mask is not None:
            global_mask = mask[:, None, :, None]
            v.masked_fill_(~global_mask, 0.)
        out = self.fast_attention(q, k, v)
        out = out.transpose(1, 2).reshape(b, n, -1)
        return self.to_out(out)


class Performer(nn.Module):
    def __init__(self, num_tokens=40, dim=32, depth=2, heads=4, max_seq_len=16, causal=(False, True)):
        super().__init__()
        self.token_emb = nn.Embedding(num_tokens, dim)
        self.pos_emb = nn.Embedding(max_seq_len, dim)
        self.layers = nn.ModuleList([])
        for i in range(depth):
            self.layers.append(nn.ModuleList([
                nn.LayerNorm(dim), SelfAttention(dim, heads, causal[i], seed=i),
                nn.LayerNorm(dim), nn.Sequential(nn.Linear(dim, dim * 4), nn.GELU(),
                                                 nn.Linear(dim * 4, dim))]))
        self.norm = nn.LayerNorm(dim)
        self.to_out = nn.Linear(dim, num_tokens)

    def forward(self, x, mask=None):
        b, n = x.shape
        x = self.token_emb(x)
        x += self.pos_emb(torch.arange(n, device=x.device))
        for norm1, attn, norm2, ff in self.layers:
            x = x + attn(norm1(x), mask=mask)
            x = x + ff(norm2(x))
        return self.to_out(self.norm(x))


torch.manual_seed(0)
model = Performer().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randint(0, 40, (2, 12), generator=g)


def example_kwargs():
    mask = torch.ones(2, 12, dtype=torch.bool)
    mask[1, 9:] = False
    return {"mask": mask}
