"""A RetNet-style multi-scale retention layer with rotary position
embeddings computed in forward: inverse frequencies as a buffer, angles by
torch.outer over an arange, cos/sin with rotate_half in the GPT-NeoX
style, per-head decay rates gamma, the parallel form's decay mask
D[n, m] = gamma^(n - m) for n >= m built from the sequence length, and a
GroupNorm over heads with a swish gate."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, base=10000):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, seq_len, device):
        t = torch.arange(seq_len, device=device, dtype=self.inv_freq.dtype)
        freqs = torch.outer(t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos()[None, None, :, :], emb.sin()[None, None, :, :]


def apply_rotary(x, cos, sin):
    return (x * cos) + (rotate_half(x) * sin)


class MultiScaleRetention(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.scaling = self.head_dim ** -0.5
        self.q_proj = nn.Linear(dim, dim, bias=False)
        self.k_proj = nn.Linear(dim, dim, bias=False)
        self.v_proj = nn.Linear(dim, dim, bias=False)
        self.g_proj = nn.Linear(dim, dim, bias=False)
        self.out_proj = nn.Linear(dim, dim, bias=False)
        self.group_norm = nn.GroupNorm(heads, dim, affine=False)
        self.rotary = RotaryEmbedding(self.head_dim)
        decay = torch.log(1 - 2 ** (-5 - torch.arange(heads, dtype=torch.float)))
        self.register_buffer("decay", decay)

    def decay_mask(self, slen):
        index = torch.arange(slen).to(self.decay)
        mask = torch.tril(torch.ones(slen, slen).to(self.decay))
        mask = torch.masked_fill(index[:, None] - index[None, :], ~mask.bool(), float("inf"))
        mask = torch.exp(mask * self.decay[:, None, None])
        mask = torch.nan_to_num(mask)
        mask = mask / mask.sum(dim=-1, keepdim=True).sqrt()
        return mask

    def forward(self, x):
        bsz, tgt_len, embed_dim = x.size()
        q = self.q_proj(x).view(bsz, tgt_len, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(bsz, tgt_len, self.heads, self.head_dim).transpose(1, 2) * self.scaling
        v = self.v_proj(x).view(bsz, tgt_len, self.heads, self.head_dim).transpose(1, 2)
        cos, sin = self.rotary(tgt_len, x.device)
        q, k = apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)
        qk = q @ k.transpose(-1, -2)
        qk = qk * self.decay_mask(tgt_len)
        qk = qk / qk.detach().abs().sum(dim=-1, keepdim=True).clamp(min=1)
        out = qk @ v
        out = out.transpose(1, 2).reshape(bsz, tgt_len, embed_dim)
        out = self.group_norm(out.reshape(-1, embed_dim)).reshape(bsz, tgt_len, embed_dim)
        out = F.silu(self.g_proj(x)) * out
        return self.out_proj(out)


class RetNet(nn.Module):
    def __init__(self, vocab=64, dim=32, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList([nn.ModuleDict({
            "norm1": nn.LayerNorm(dim), "retention": MultiScaleRetention(dim),
            "norm2": nn.LayerNorm(dim), "ffn": nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(),
                                                              nn.Linear(2 * dim, dim))})
            for _ in range(layers)])
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        x = self.embed(tokens) * math.sqrt(self.embed.embedding_dim)
        for layer in self.layers:
            x = x + layer["retention"](layer["norm1"](x))
            x = x + layer["ffn"](layer["norm2"](x))
        return self.head(x)


torch.manual_seed(0)
model = RetNet().eval()


def example_inputs():
    return torch.randint(0, 64, (2, 12), generator=torch.Generator().manual_seed(1))
