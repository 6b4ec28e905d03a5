"""A Perceiver in the style of lucidrains' perceiver-pytorch: a learned
latent array repeated over the batch with einops.repeat, cross-attention
from latents to the inputs with an optional boolean mask, `exists` and
`default` helpers, heads folded with rearrange, einsum similarities, a
GEGLU feed-forward, and a PreNorm wrapper that also normalizes a context
passed as a keyword."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange, repeat


def exists(val):
    return val is not None


def default(val, d):
    return val if exists(val) else d


class PreNorm(nn.Module):
    def __init__(self, dim, fn, context_dim=None):
        super().__init__()
        self.fn = fn
        self.norm = nn.LayerNorm(dim)
        self.norm_context = nn.LayerNorm(context_dim) if exists(context_dim) else None

    def forward(self, x, **kwargs):
        x = self.norm(x)
        if exists(self.norm_context):
            context = kwargs["context"]
            normed_context = self.norm_context(context)
            kwargs.update(context=normed_context)
        return self.fn(x, **kwargs)


class GEGLU(nn.Module):
    def forward(self, x):
        x, gates = x.chunk(2, dim=-1)
        return x * F.gelu(gates)


class FeedForward(nn.Module):
    def __init__(self, dim, mult=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, dim * mult * 2), GEGLU(), nn.Linear(dim * mult, dim))

    def forward(self, x):
        return self.net(x)


class Attention(nn.Module):
    def __init__(self, query_dim, context_dim=None, heads=2, dim_head=16):
        super().__init__()
        inner_dim = dim_head * heads
        context_dim = default(context_dim, query_dim)
        self.scale = dim_head ** -0.5
        self.heads = heads
        self.to_q = nn.Linear(query_dim, inner_dim, bias=False)
        self.to_kv = nn.Linear(context_dim, inner_dim * 2, bias=False)
        self.to_out = nn.Linear(inner_dim, query_dim)

    def forward(self, x, context=None, mask=None):
        h = self.heads
        q = self.to_q(x)
        context = default(context, x)
        k, v = self.to_kv(context).chunk(2, dim=-1)
        q, k, v = map(lambda t: rearrange(t, "b n (h d) -> (b h) n d", h=h), (q, k, v))
        sim = torch.einsum("b i d, b j d -> b i j", q, k) * self.scale
        if exists(mask):
            mask = rearrange(mask, "b ... -> b (...)")
            max_neg_value = -torch.finfo(sim.dtype).max
            mask = repeat(mask, "b j -> (b h) () j", h=h)
            sim.masked_fill_(~mask, max_neg_value)
        attn = sim.softmax(dim=-1)
        out = torch.einsum("b i j, b j d -> b i d", attn, v)
        out = rearrange(out, "(b h) n d -> b n (h d)", h=h)
        return self.to_out(out)


class Perceiver(nn.Module):
    def __init__(self, input_dim=12, num_latents=8, latent_dim=32, depth=2, num_classes=5,
                 self_per_cross_attn=1):
        super().__init__()
        self.latents = nn.Parameter(torch.randn(num_latents, latent_dim))
        self.layers = nn.ModuleList([])
        for _ in range(depth):
            self_attns = nn.ModuleList([])
            for _ in range(self_per_cross_attn):
                self_attns.append(nn.ModuleList([
                    PreNorm(latent_dim, Attention(latent_dim)),
                    PreNorm(latent_dim, FeedForward(latent_dim))]))
            self.layers.append(nn.ModuleList([
                PreNorm(latent_dim, Attention(latent_dim, input_dim, heads=1, dim_head=24),
                        context_dim=input_dim),
                PreNorm(latent_dim, FeedForward(latent_dim)),
                self_attns]))
        self.to_logits = nn.Sequential(nn.LayerNorm(latent_dim), nn.Linear(latent_dim, num_classes))

    def forward(self, data, mask=None, return_embeddings=False):
        b, *axis, _, device = *data.shape, data.device
        data = rearrange(data, "b ... d -> b (...) d")
        x = repeat(self.latents, "n d -> b n d", b=b)
        for cross_attn, cross_ff, self_attns in self.layers:
            x = cross_attn(x, context=data, mask=mask) + x
            x = cross_ff(x) + x
            for self_attn, self_ff in self_attns:
                x = self_attn(x) + x
                x = self_ff(x) + x
        if return_embeddings:
            return x
        return self.to_logits(x.mean(dim=-2))


torch.manual_seed(0)
model = Perceiver().eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    data = torch.randn(2, 4, 5, 12, generator=g)
    mask = torch.ones(2, 4, 5, dtype=torch.bool)
    mask[1, 3:] = False
    return data, mask
