"""Memory-efficient attention written in torch as the xformers /
"self-attention does not need O(n^2) memory" fallbacks do: keys and
values split into chunks, each chunk's scores reduced by `torch.logsumexp`
and its running maximum, partial outputs rescaled by `torch.exp` of the
difference of logsumexps and summed, a key padding mask added as a
large negative bias; the choice between
`F.scaled_dot_product_attention` and the fallback made by
`hasattr(F, "scaled_dot_product_attention")` and a module flag, and an
`nn.MultiheadAttention`-free encoder around it."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def _chunk_attention(q, k, v, bias, chunk_size):
    # q: (B, H, M, D); k, v: (B, H, N, D); bias: (B, 1, 1, N)
    lse_list, out_list = [], []
    n = k.shape[-2]
    for start in range(0, n, chunk_size):
        end = min(start + chunk_size, n)
        s = torch.einsum("bhmd,bhnd->bhmn", q, k[:, :, start:end])
        s = s + bias[..., start:end]
        lse = torch.logsumexp(s, dim=-1, keepdim=True)
        p = torch.exp(s - lse)
        out_list.append(torch.einsum("bhmn,bhnd->bhmd", p, v[:, :, start:end]))
        lse_list.append(lse)
    lse_all = torch.cat(lse_list, dim=-1)
    total = torch.logsumexp(lse_all, dim=-1, keepdim=True)
    out = torch.zeros_like(out_list[0])
    for i, o in enumerate(out_list):
        out = out + torch.exp(lse_all[..., i:i + 1] - total) * o
    return out


def memory_efficient_attention(q, k, v, key_padding_mask=None, chunk_size=4):
    scale = 1.0 / math.sqrt(q.shape[-1])
    q = q * scale
    if key_padding_mask is not None:
        bias = torch.zeros(key_padding_mask.shape, dtype=q.dtype, device=q.device)
        bias = bias.masked_fill(~key_padding_mask, -1e4)[:, None, None, :]
    else:
        bias = q.new_zeros(q.shape[0], 1, 1, k.shape[-2])
    return _chunk_attention(q, k, v, bias, chunk_size)


class MemEffAttention(nn.Module):
    def __init__(self, dim, num_heads, use_sdpa):
        super().__init__()
        self.num_heads = num_heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        self.fused = use_sdpa and hasattr(F, "scaled_dot_product_attention")

    def forward(self, x, key_padding_mask=None):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        if self.fused:
            mask = None if key_padding_mask is None else key_padding_mask[:, None, None, :]
            x = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        else:
            x = memory_efficient_attention(q, k, v, key_padding_mask)
        x = x.transpose(1, 2).reshape(B, N, C)
        return self.proj(x)


class Layer(nn.Module):
    def __init__(self, dim, heads, use_sdpa):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = MemEffAttention(dim, heads, use_sdpa)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x, key_padding_mask):
        x = x + self.attn(self.norm1(x), key_padding_mask)
        return x + self.mlp(self.norm2(x))


class Encoder(nn.Module):
    def __init__(self, vocab=64, dim=32, heads=4, depth=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.randn(1, 32, dim) * 0.02)
        self.layers = nn.ModuleList([Layer(dim, heads, use_sdpa=(i % 2 == 0)) for i in range(depth)])
        self.norm = nn.LayerNorm(dim)

    def forward(self, tokens, key_padding_mask):
        x = self.embed(tokens) + self.pos[:, :tokens.shape[1]]
        for layer in self.layers:
            x = layer(x, key_padding_mask)
        return self.norm(x)


torch.manual_seed(0)
model = Encoder().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, 64, (2, 10), generator=g)
    mask = torch.ones(2, 10, dtype=torch.bool)
    mask[1, 7:] = False
    return tokens, mask
