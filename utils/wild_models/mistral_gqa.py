"""A Mistral-style decoder layer stack as single-file inference ports write
it: grouped-query attention with `repeat_kv` by `expand` and `reshape`,
RMSNorm upcast to float32 with `torch.rsqrt`, rotary embeddings from an
`inv_freq` buffer and an `einsum` outer product, a sliding-window causal
mask built from `torch.full(finfo.min)`, `torch.triu` and a second `tril`
with a negative diagonal, the padding mask folded in with
`masked_fill(finfo.min)`, a rolling key/value cache of at most `window`
positions (the oldest dropped by slicing), and SwiGLU feed-forward."""
import math
from dataclasses import dataclass
from typing import List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class ModelArgs:
    dim: int = 48
    n_layers: int = 2
    head_dim: int = 12
    hidden_dim: int = 96
    n_heads: int = 4
    n_kv_heads: int = 2
    sliding_window: int = 6
    norm_eps: float = 1e-5
    vocab_size: int = 64
    rope_theta: float = 10000.0


def repeat_kv(hidden_states: torch.Tensor, n_rep: int) -> torch.Tensor:
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        input_dtype = x.dtype
        x = x.to(torch.float32)
        variance = x.pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(variance + self.eps)
        return self.weight * x.to(input_dtype)


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    @torch.no_grad()
    def forward(self, x, position_ids):
        freqs = torch.einsum("bi,j->bij", position_ids.float(), self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(x.dtype), emb.sin().to(x.dtype)


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary(q, k, cos, sin):
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


def sliding_window_causal_mask(q_len: int, kv_len: int, window: int, dtype, device):
    min_value = torch.finfo(dtype).min
    offset = kv_len - q_len
    mask = torch.full((q_len, kv_len), fill_value=min_value, dtype=dtype, device=device)
    mask = torch.triu(mask, diagonal=offset + 1)
    window_mask = torch.tril(torch.ones_like(mask, dtype=torch.bool), diagonal=offset - window)
    return mask.masked_fill(window_mask, min_value)


class Attention(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim = args.n_heads, args.n_kv_heads, args.head_dim
        self.repeats = self.n_heads // self.n_kv_heads
        self.sliding_window = args.sliding_window
        self.scale = args.head_dim ** -0.5
        self.wq = nn.Linear(args.dim, args.n_heads * args.head_dim, bias=False)
        self.wk = nn.Linear(args.dim, args.n_kv_heads * args.head_dim, bias=False)
        self.wv = nn.Linear(args.dim, args.n_kv_heads * args.head_dim, bias=False)
        self.wo = nn.Linear(args.n_heads * args.head_dim, args.dim, bias=False)

    def forward(self, x, cos, sin, cache: Optional[Tuple[torch.Tensor, torch.Tensor]], padding_mask):
        bsz, seqlen, _ = x.shape
        xq = self.wq(x).view(bsz, seqlen, self.n_heads, self.head_dim).transpose(1, 2)
        xk = self.wk(x).view(bsz, seqlen, self.n_kv_heads, self.head_dim).transpose(1, 2)
        xv = self.wv(x).view(bsz, seqlen, self.n_kv_heads, self.head_dim).transpose(1, 2)
        xq, xk = apply_rotary(xq, xk, cos, sin)
        if cache is not None:
            past_k, past_v = cache
            xk = torch.cat([past_k, xk], dim=2)
            xv = torch.cat([past_v, xv], dim=2)
        kv_len = xk.shape[2]
        mask = sliding_window_causal_mask(seqlen, kv_len, self.sliding_window, xq.dtype, xq.device)
        mask = mask[None, None].masked_fill(~padding_mask[:, None, None, -kv_len:].bool(),
                                            torch.finfo(xq.dtype).min)
        key = repeat_kv(xk, self.repeats)
        value = repeat_kv(xv, self.repeats)
        scores = torch.matmul(xq, key.transpose(2, 3)) * self.scale + mask
        scores = F.softmax(scores.float(), dim=-1).type_as(xq)
        out = torch.matmul(scores, value).transpose(1, 2).reshape(bsz, seqlen, -1)
        # keep only the last `sliding_window` positions in the rolling cache
        new_cache = (xk[:, :, -self.sliding_window:], xv[:, :, -self.sliding_window:])
        return self.wo(out), new_cache


class FeedForward(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.w1 = nn.Linear(args.dim, args.hidden_dim, bias=False)
        self.w2 = nn.Linear(args.hidden_dim, args.dim, bias=False)
        self.w3 = nn.Linear(args.dim, args.hidden_dim, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class TransformerBlock(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.attention = Attention(args)
        self.feed_forward = FeedForward(args)
        self.attention_norm = RMSNorm(args.dim, eps=args.norm_eps)
        self.ffn_norm = RMSNorm(args.dim, eps=args.norm_eps)

    def forward(self, x, cos, sin, cache, padding_mask):
        r, new_cache = self.attention(self.attention_norm(x), cos, sin, cache, padding_mask)
        h = x + r
        return h + self.feed_forward(self.ffn_norm(h)), new_cache


class Transformer(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.args = args
        self.tok_embeddings = nn.Embedding(args.vocab_size, args.dim)
        self.layers = nn.ModuleList([TransformerBlock(args) for _ in range(args.n_layers)])
        self.norm = RMSNorm(args.dim, eps=args.norm_eps)
        self.output = nn.Linear(args.dim, args.vocab_size, bias=False)
        self.rotary = RotaryEmbedding(args.head_dim, args.rope_theta)

    def forward(self, input_ids, attention_mask, past_key_values: List[Tuple[torch.Tensor, torch.Tensor]]):
        seqlen = input_ids.shape[1]
        position_ids = attention_mask.long().cumsum(-1) - 1
        position_ids = position_ids.clamp(min=0)[:, -seqlen:]
        h = self.tok_embeddings(input_ids)
        cos, sin = self.rotary(h, position_ids)
        new_caches = []
        for layer, cache in zip(self.layers, past_key_values):
            h, new_cache = layer(h, cos, sin, cache, attention_mask)
            new_caches.append(new_cache)
        return self.output(self.norm(h)).float(), new_caches


torch.manual_seed(0)
model = Transformer(ModelArgs()).eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    past, new = 5, 3
    input_ids = torch.randint(0, 64, (2, new), generator=g)
    attention_mask = torch.ones(2, past + new, dtype=torch.long)
    attention_mask[0, :2] = 0
    cache = [(torch.randn(2, 2, past, 12, generator=g), torch.randn(2, 2, past, 12, generator=g))
             for _ in range(2)]
    return input_ids, attention_mask, cache
