"""The Hyena operator as HazyResearch's safari repository writes it: an
implicit long filter from an MLP over complex-exponential positional
features (a Sin activation module with a learnable frequency), an
exponential decay modulation buffer, fftconv through torch.fft.rfft/irfft
with n = 2L and the bias term u * D, a short depthwise Conv1d over the
projected inputs, rearranged by einops, and the order-N gated recurrence
over the split projections."""
import math

import torch
import torch.nn as nn
from einops import rearrange


def fftconv(u, k, D):
    seqlen = u.shape[-1]
    fft_size = 2 * seqlen
    k_f = torch.fft.rfft(k, n=fft_size) / fft_size
    u_f = torch.fft.rfft(u.to(dtype=k.dtype), n=fft_size)
    if len(u.shape) > 3:
        k_f = k_f.unsqueeze(1)
    y = torch.fft.irfft(u_f * k_f, n=fft_size, norm="forward")[..., :seqlen]
    out = y + u * D.unsqueeze(-1)
    return out.to(dtype=u.dtype)


class Sin(nn.Module):
    def __init__(self, dim, w=10, train_freq=True):
        super().__init__()
        self.freq = nn.Parameter(w * torch.ones(1, dim)) if train_freq else w * torch.ones(1, dim)

    def forward(self, x):
        return torch.sin(self.freq * x)


class PositionalEmbedding(nn.Module):
    def __init__(self, emb_dim, seq_len, lr_pos_emb=1e-5):
        super().__init__()
        self.seq_len = seq_len
        t = torch.linspace(0, 1, self.seq_len)[None, :, None]
        if emb_dim > 1:
            bands = (emb_dim - 1) // 2
        t_rescaled = torch.linspace(0, seq_len - 1, seq_len)[None, :, None]
        w = 2 * math.pi * t_rescaled / seq_len
        f = torch.linspace(1e-4, bands - 1, bands)[None, None]
        z = torch.exp(-1j * f * w)
        z = torch.cat([t, z.real, z.imag], dim=-1)
        self.register_buffer("z", z)
        self.register_buffer("t", t)

    def forward(self, L):
        return self.z[:, :L], self.t[:, :L]


class ExponentialModulation(nn.Module):
    def __init__(self, d_model, fast_decay_pct=0.3, slow_decay_pct=1.5, target=1e-2, shift=0.0):
        super().__init__()
        self.shift = shift
        max_decay = math.log(target) / fast_decay_pct
        min_decay = math.log(target) / slow_decay_pct
        deltas = torch.linspace(min_decay, max_decay, d_model)[None, None]
        self.register_buffer("deltas", deltas)

    def forward(self, t, x):
        decay = torch.exp(-t * self.deltas.abs())
        return x * (decay + self.shift)


class HyenaFilter(nn.Module):
    def __init__(self, d_model, emb_dim=3, order=16, seq_len=32, w=1):
        super().__init__()
        self.d_model = d_model
        self.bias = nn.Parameter(torch.randn(self.d_model))
        act = Sin(dim=order, w=w)
        self.pos_emb = PositionalEmbedding(emb_dim, seq_len)
        self.implicit_filter = nn.Sequential(
            nn.Linear(emb_dim, order), act,
            nn.Linear(order, order), act,
            nn.Linear(order, d_model, bias=False))
        self.modulation = ExponentialModulation(d_model)

    def filter(self, L):
        z, t = self.pos_emb(L)
        h = self.implicit_filter(z)
        return self.modulation(t, h)

    def forward(self, x, L, k=None, bias=None):
        if k is None:
            k = self.filter(L)
        k = k[0] if type(k) is tuple else k
        return fftconv(x, k, bias)


class HyenaOperator(nn.Module):
    def __init__(self, d_model, l_max, order=2, filter_order=16):
        super().__init__()
        self.d_model, self.l_max, self.order = d_model, l_max, order
        inner_width = d_model * (order + 1)
        self.in_proj = nn.Linear(d_model, inner_width)
        self.out_proj = nn.Linear(d_model, d_model)
        self.short_filter = nn.Conv1d(inner_width, inner_width, 3, padding=2, groups=inner_width)
        self.filter_fn = HyenaFilter(d_model * (order - 1), order=filter_order, seq_len=l_max)

    def forward(self, u):
        l = u.size(-2)
        l_filter = min(l, self.l_max)
        u = self.in_proj(u)
        u = rearrange(u, "b l d -> b d l")
        uc = self.short_filter(u)[..., :l_filter]
        *x, v = uc.split(self.d_model, dim=1)
        k = self.filter_fn.filter(l_filter)[0]
        k = rearrange(k, "l (o d) -> o d l", o=self.order - 1)
        bias = rearrange(self.filter_fn.bias, "(o d) -> o d", o=self.order - 1)
        for o, x_i in enumerate(reversed(x[1:])):
            v = v * x_i
            v = self.filter_fn(v, l_filter, k=k[o], bias=bias[o])
        y = rearrange(v * x[0], "b d l -> b l d")
        return self.out_proj(y)


class HyenaLM(nn.Module):
    def __init__(self, vocab=40, d_model=16, n_layer=2, l_max=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, d_model)
        self.blocks = nn.ModuleList([
            nn.ModuleDict({"norm1": nn.LayerNorm(d_model), "mixer": HyenaOperator(d_model, l_max),
                           "norm2": nn.LayerNorm(d_model),
                           "mlp": nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(),
                                                nn.Linear(4 * d_model, d_model))})
            for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)

    def forward(self, input_ids):
        h = self.emb(input_ids)
        for block in self.blocks:
            h = h + block["mixer"](block["norm1"](h))
            h = h + block["mlp"](block["norm2"](h))
        return self.head(self.ln_f(h))


torch.manual_seed(0)
model = HyenaLM().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randint(0, 40, (2, 20), generator=g)
