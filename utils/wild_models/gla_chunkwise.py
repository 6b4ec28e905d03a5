"""Gated linear attention in the chunkwise form, as flash-linear-attention's
naive references and RetNet's `chunk_forward` write it: data-dependent
forget gates by `F.logsigmoid(...) / normalizer` (low-rank gate
projection), the sequence padded by `F.pad` to a chunk multiple and split
by `rearrange('b h (n c) d -> b h n c d')`, within-chunk gate prefix
sums by `cumsum(-2)`, the intra-chunk part as a masked `q k^T` (a
`triu(diagonal=1)` boolean mask filled by `masked_fill_`), the
inter-chunk part read from a `[B, H, Dk, Dv]` state carried through a
Python loop over chunks and decayed by the chunk's last gate sum,
outputs written into an `empty_like` tensor by `o[:, :, i] = ...`, the
final state returned as for generation, and a swish output gate over a
per-head RMSNorm."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange


def chunk_gla_ref(q, k, v, gk, chunk_size=4, initial_state=None):
    dtype = q.dtype
    q, k, v, gk = (t.float() for t in (q, k, v, gk))
    T = q.shape[-2]
    pad_len = (chunk_size - T % chunk_size) % chunk_size
    if pad_len > 0:
        q, k, v, gk = (F.pad(t, (0, 0, 0, pad_len)) for t in (q, k, v, gk))
    q, k, v, gk = (rearrange(t, "b h (n c) d -> b h n c d", c=chunk_size) for t in (q, k, v, gk))
    B, H, N, C, Dk = q.shape
    Dv = v.shape[-1]
    q = q * Dk ** -0.5
    gk = gk.cumsum(-2)
    state = q.new_zeros(B, H, Dk, Dv)
    if initial_state is not None:
        state = state + initial_state.float()
    mask = torch.triu(torch.ones(C, C, dtype=torch.bool, device=q.device), diagonal=1)
    o = torch.empty_like(v)
    for i in range(N):
        q_i, k_i, v_i, g_i = q[:, :, i], k[:, :, i], v[:, :, i], gk[:, :, i]
        # pairwise decays exp(g_t - g_s) per key dimension, s <= t
        decay = (g_i[..., :, None, :] - g_i[..., None, :, :]).exp()
        attn = torch.einsum("bhtd,bhsd,bhtsd->bhts", q_i, k_i, decay)
        attn = attn.masked_fill_(mask, 0.0)
        inter = (q_i * g_i.exp()) @ state
        o[:, :, i] = inter + attn @ v_i
        g_last = g_i[:, :, -1]
        state = state * g_last.exp()[..., None] + (k_i * (g_last[:, :, None, :] - g_i).exp()).transpose(-1, -2) @ v_i
    o = rearrange(o, "b h n c d -> b h (n c) d")[:, :, :T]
    return o.to(dtype), state


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class GatedLinearAttention(nn.Module):
    def __init__(self, dim=32, heads=2, gate_low_rank=8, gate_logit_normalizer=16, chunk_size=4):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.q_proj = nn.Linear(dim, dim // 2, bias=False)  # expand_k = 0.5
        self.k_proj = nn.Linear(dim, dim // 2, bias=False)
        self.v_proj = nn.Linear(dim, dim, bias=False)
        self.gk_proj = nn.Sequential(nn.Linear(dim, gate_low_rank, bias=False), nn.Linear(gate_low_rank, dim // 2))
        self.g_proj = nn.Linear(dim, dim, bias=False)
        self.g_norm = RMSNorm(self.head_dim)
        self.o_proj = nn.Linear(dim, dim, bias=False)
        self.normalizer = gate_logit_normalizer
        self.chunk_size = chunk_size

    def forward(self, x, state=None):
        q = rearrange(self.q_proj(x), "b t (h d) -> b h t d", h=self.heads)
        k = rearrange(self.k_proj(x), "b t (h d) -> b h t d", h=self.heads)
        v = rearrange(self.v_proj(x), "b t (h d) -> b h t d", h=self.heads)
        gk = rearrange(F.logsigmoid(self.gk_proj(x)) / self.normalizer, "b t (h d) -> b h t d", h=self.heads)
        o, state = chunk_gla_ref(q, k, v, gk, self.chunk_size, state)
        o = self.g_norm(rearrange(o, "b h t d -> b t h d"))
        o = rearrange(o, "b t h d -> b t (h d)") * F.silu(self.g_proj(x))
        return self.o_proj(o), state


class GLAModel(nn.Module):
    def __init__(self, vocab=48, dim=32, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(GatedLinearAttention(dim) for _ in range(layers))
        self.norms = nn.ModuleList(RMSNorm(dim) for _ in range(layers))
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids):
        h = self.embed(input_ids)
        states = []
        for norm, layer in zip(self.norms, self.layers):
            out, state = layer(norm(h))
            h = h + out
            states.append(state)
        return self.head(h), states


torch.manual_seed(0)
model = GLAModel().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.randint(0, 48, (2, 11), generator=g),)
