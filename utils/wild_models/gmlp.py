"""gMLP / aMLP in the style of lucidrains' g-mlp-pytorch: the spatial gating
unit (gate LayerNorm'd, mixed over positions by an einsum with per-head
weights, causal masking by a `triu_` mask, circulant weights built by
`F.pad`/`repeat`/reshape with positional factors), a tiny single-head
attention whose output is added to the gate, `Residual`/`PreNorm`
wrappers, `dropout_layers` dropping blocks at random in training only,
and token logits from an embedding."""
from random import randrange

import torch
import torch.nn.functional as F
from einops import rearrange, repeat
from einops.layers.torch import Rearrange, Reduce
from torch import einsum, nn


def exists(val):
    return val is not None


def pair(val):
    return (val, val) if not isinstance(val, tuple) else val


def dropout_layers(layers, prob_survival):
    if prob_survival == 1:
        return layers
    num_layers = len(layers)
    to_drop = torch.zeros(num_layers).uniform_(0., 1.) > prob_survival
    if all(to_drop):
        rand_index = randrange(num_layers)
        to_drop[rand_index] = False
    layers = [layer for (layer, drop) in zip(layers, to_drop) if not drop]
    return layers


def shift(t, amount, mask=None):
    if amount == 0:
        return t
    return F.pad(t, (0, 0, amount, -amount), value=0.)


class Residual(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x) + x


class PreNorm(nn.Module):
    def __init__(self, dim, fn):
        super().__init__()
        self.fn = fn
        self.norm = nn.LayerNorm(dim)

    def forward(self, x, **kwargs):
        x = self.norm(x)
        return self.fn(x, **kwargs)


class Attention(nn.Module):
    def __init__(self, dim_in, dim_out, dim_inner, causal=False):
        super().__init__()
        self.scale = dim_inner ** -0.5
        self.causal = causal
        self.to_qkv = nn.Linear(dim_in, dim_inner * 3, bias=False)
        self.to_out = nn.Linear(dim_inner, dim_out)

    def forward(self, x):
        device = x.device
        q, k, v = self.to_qkv(x).chunk(3, dim=-1)
        sim = einsum("b i d, b j d -> b i j", q, k) * self.scale
        if self.causal:
            mask = torch.ones(sim.shape[-2:], device=device).triu(1).bool()
            sim.masked_fill_(mask[None, ...], -torch.finfo(q.dtype).max)
        attn = sim.softmax(dim=-1)
        out = einsum("b i j, b j d -> b i d", attn, v)
        return self.to_out(out)


class SpatialGatingUnit(nn.Module):
    def __init__(self, dim, dim_seq, causal=False, act=nn.Identity(), heads=1, init_eps=1e-3,
                 circulant_matrix=False):
        super().__init__()
        dim_out = dim // 2
        self.heads = heads
        self.causal = causal
        self.norm = nn.LayerNorm(dim_out)
        self.act = act
        if circulant_matrix:
            self.circulant_pos_x = nn.Parameter(torch.ones(heads, dim_seq))
            self.circulant_pos_y = nn.Parameter(torch.ones(heads, dim_seq))
        self.circulant_matrix = circulant_matrix
        shape = (heads, dim_seq,) if circulant_matrix else (heads, dim_seq, dim_seq)
        weight = torch.zeros(shape)
        self.weight = nn.Parameter(weight)
        init_eps /= dim_seq
        nn.init.uniform_(self.weight, -init_eps, init_eps)
        self.bias = nn.Parameter(torch.ones(heads, dim_seq))

    def forward(self, x, gate_res=None):
        device, n, h = x.device, x.shape[1], self.heads
        res, gate = x.chunk(2, dim=-1)
        gate = self.norm(gate)
        weight, bias = self.weight, self.bias
        if self.circulant_matrix:
            dim_seq = weight.shape[-1]
            weight = F.pad(weight, (0, dim_seq), value=0)
            weight = repeat(weight, "... n -> ... (r n)", r=dim_seq)
            weight = weight[:, :-dim_seq].reshape(h, dim_seq, 2 * dim_seq - 1)
            weight = weight[:, :, (dim_seq - 1):]
            pos_x, pos_y = self.circulant_pos_x, self.circulant_pos_y
            weight = weight * rearrange(pos_x, "h i -> h i ()") * rearrange(pos_y, "h j -> h () j")
        if self.causal:
            weight, bias = weight[:, :n, :n], bias[:, :n]
            mask = torch.ones(weight.shape[-2:], device=device).triu_(1).bool()
            mask = rearrange(mask, "i j -> () i j")
            weight = weight.masked_fill(mask, 0.)
        gate = rearrange(gate, "b n (h d) -> b h n d", h=h)
        gate = einsum("b h n d, h m n -> b h m d", gate, weight)
        gate = gate + rearrange(bias, "h n -> () h n ()")
        gate = rearrange(gate, "b h n d -> b n (h d)")
        if exists(gate_res):
            gate = gate + gate_res
        return self.act(gate) * res


class gMLPBlock(nn.Module):
    def __init__(self, *, dim, dim_ff, seq_len, heads=1, attn_dim=None, causal=False, act=nn.Identity(),
                 circulant_matrix=False):
        super().__init__()
        self.proj_in = nn.Sequential(nn.Linear(dim, dim_ff), nn.GELU())
        self.attn = Attention(dim, dim_ff // 2, attn_dim, causal) if exists(attn_dim) else None
        self.sgu = SpatialGatingUnit(dim_ff, seq_len, causal, act, heads, circulant_matrix=circulant_matrix)
        self.proj_out = nn.Linear(dim_ff // 2, dim)

    def forward(self, x):
        gate_res = self.attn(x) if exists(self.attn) else None
        x = self.proj_in(x)
        x = self.sgu(x, gate_res=gate_res)
        return self.proj_out(x)


class gMLP(nn.Module):
    def __init__(self, *, num_tokens=40, dim=32, depth=3, seq_len=10, heads=2, ff_mult=2, attn_dim=8,
                 prob_survival=0.9, causal=True, circulant_matrix=True, act=nn.Tanh()):
        super().__init__()
        dim_ff = dim * ff_mult
        self.seq_len = seq_len
        self.prob_survival = prob_survival
        self.to_embed = nn.Embedding(num_tokens, dim)
        self.layers = nn.ModuleList([Residual(PreNorm(dim, gMLPBlock(
            dim=dim, heads=heads, dim_ff=dim_ff, seq_len=seq_len, attn_dim=attn_dim, causal=causal,
            act=act, circulant_matrix=circulant_matrix and i % 2 == 0))) for i in range(depth)])
        self.to_logits = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, num_tokens))

    def forward(self, x):
        x = self.to_embed(x)
        layers = self.layers if not self.training else dropout_layers(self.layers, self.prob_survival)
        out = nn.Sequential(*layers)(x)
        return self.to_logits(out)


torch.manual_seed(0)
model = gMLP().eval()
with torch.no_grad():
    # Trained spatial weights are far from the near-zero init.
    for layer in model.modules():
        if isinstance(layer, SpatialGatingUnit):
            layer.weight.normal_(0, 0.3)
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randint(0, 40, (2, 10), generator=g)
