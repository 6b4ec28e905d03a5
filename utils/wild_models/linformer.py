"""Linformer in the style of lucidrains' linformer: keys and values projected
along the sequence to `k` by einsum with `proj_k`/`proj_v` parameters
(shared when `share_kv`), sliced when the input is shorter than `seq_len`,
`map` over `zip` of tensors and projections, heads merged with
`expand(-1, h, -1, -1)` (one key head shared), a `GELU_` fallback chosen by
`hasattr(nn, 'GELU')`, and `SequentialSequence` routing layers pairwise."""
import math

import torch
from torch import nn


def default(val, default_val):
    return val if val is not None else default_val


def init_(tensor):
    dim = tensor.shape[-1]
    std = 1 / math.sqrt(dim)
    tensor.uniform_(-std, std)
    return tensor


class Residual(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return x + self.fn(x)


class PreNorm(nn.Module):
    def __init__(self, dim, fn):
        super().__init__()
        self.fn = fn
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        x = self.norm(x)
        return self.fn(x)


class GELU_(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * torch.pow(x, 3))))


GELU = nn.GELU if hasattr(nn, "GELU") else GELU_


class FeedForward(nn.Module):
    def __init__(self, dim, mult=4, dropout=0., activation=None, glu=False):
        super().__init__()
        activation = default(activation, GELU)
        self.glu = glu
        self.w1 = nn.Linear(dim, dim * mult * (2 if glu else 1))
        self.act = activation()
        self.dropout = nn.Dropout(dropout)
        self.w2 = nn.Linear(dim * mult, dim)

    def forward(self, x, **kwargs):
        if not self.glu:
            x = self.w1(x)
            x = self.act(x)
        else:
            x, v = self.w1(x).chunk(2, dim=-1)
            x = self.act(x) * v
        x = self.dropout(x)
        return self.w2(x)


class LinformerSelfAttention(nn.Module):
    def __init__(self, dim, seq_len, k=4, heads=2, dim_head=None, one_kv_head=False, share_kv=False,
                 dropout=0.):
        super().__init__()
        assert (dim % heads) == 0, "dimension must be divisible by the number of heads"
        self.seq_len = seq_len
        self.k = k
        self.heads = heads
        dim_head = default(dim_head, dim // heads)
        self.dim_head = dim_head
        self.to_q = nn.Linear(dim, dim_head * heads, bias=False)
        kv_dim = dim_head if one_kv_head else (dim_head * heads)
        self.to_k = nn.Linear(dim, kv_dim, bias=False)
        self.proj_k = nn.Parameter(init_(torch.zeros(seq_len, k)))
        self.share_kv = share_kv
        if not share_kv:
            self.to_v = nn.Linear(dim, kv_dim, bias=False)
            self.proj_v = nn.Parameter(init_(torch.zeros(seq_len, k)))
        self.dropout = nn.Dropout(dropout)
        self.to_out = nn.Linear(dim_head * heads, dim)

    def forward(self, x, context=None, **kwargs):
        b, n, d, d_h, h, k = *x.shape, self.dim_head, self.heads, self.k
        kv_len = n if context is None else context.shape[1]
        assert kv_len <= self.seq_len, \
            f"the sequence length of the key / values must be {self.seq_len} - {kv_len} given"
        queries = self.to_q(x)
        proj_seq_len = lambda args: torch.einsum("bnd,nk->bkd", *args)
        kv_input = x if context is None else context
        keys = self.to_k(kv_input)
        values = self.to_v(kv_input) if not self.share_kv else keys
        kv_projs = (self.proj_k, self.proj_v if not self.share_kv else self.proj_k)
        # allow for variable sequence lengths (less than maximum sequence length) by slicing projections
        if kv_len < self.seq_len:
            kv_projs = map(lambda t: t[:kv_len], kv_projs)
        # project keys and values along the sequence length dimension to k
        keys, values = map(proj_seq_len, zip((keys, values), kv_projs))
        # merge head into batch for queries and key / values
        queries = queries.reshape(b, n, h, -1).transpose(1, 2)
        merge_key_values = lambda t: t.reshape(b, k, -1, d_h).transpose(1, 2).expand(-1, h, -1, -1)
        keys, values = map(merge_key_values, (keys, values))
        # attention
        dots = torch.einsum("bhnd,bhkd->bhnk", queries, keys) * (d_h ** -0.5)
        attn = dots.softmax(dim=-1)
        attn = self.dropout(attn)
        out = torch.einsum("bhnk,bhkd->bhnd", attn, values)
        # split heads
        out = out.transpose(1, 2).reshape(b, n, -1)
        return self.to_out(out)


class SequentialSequence(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layers = layers

    def forward(self, x):
        for (f, g) in self.layers:
            x = x + f(x)
            x = x + g(x)
        return x


class LinformerLM(nn.Module):
    def __init__(self, num_tokens=50, dim=32, seq_len=12, depth=2, k=4, heads=4, one_kv_head=True,
                 share_kv=False):
        super().__init__()
        self.token_emb = nn.Embedding(num_tokens, dim)
        self.pos_emb = nn.Embedding(seq_len, dim)
        layers = nn.ModuleList([])
        for i in range(depth):
            attn = LinformerSelfAttention(dim, seq_len, k=k, heads=heads, one_kv_head=one_kv_head,
                                          share_kv=share_kv or i % 2 == 1)
            ff = FeedForward(dim, glu=i % 2 == 1)
            layers.append(nn.ModuleList([PreNorm(dim, attn), PreNorm(dim, ff)]))
        self.linformer = SequentialSequence(layers)
        self.to_logits = nn.Linear(dim, num_tokens)

    def forward(self, x):
        x = self.token_emb(x)
        x = self.pos_emb(torch.arange(x.shape[1], device=x.device)) + x
        x = self.linformer(x)
        return self.to_logits(x)


torch.manual_seed(0)
model = LinformerLM().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randint(0, 50, (2, 9), generator=g)
