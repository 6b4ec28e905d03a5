"""Numerical feature embeddings for tabular deep learning in the manner of
yandex-research's rtdl_num_embeddings: piecewise-linear encoding (PLE)
whose bin edges are quantiles computed at construction, the bin of each
value found by `torch.bucketize(x, edges, right=False)` clamped to the
bin count, the encoding built by comparing a `torch.arange` of bins with
the index (ones below, the fractional position in the bin at it, zeros
above) through nested `torch.where`; periodic embeddings
(`2 * math.pi * self.frequencies[None] * x[..., None]`, `cat([cos,
sin])`) followed by a per-feature `_NLinear` written with `einsum`
(PLR), and an MLP backbone on the flattened tokens."""
import math

import torch
import torch.nn as nn


def compute_bins(X, n_bins):
    """Quantile bin edges per feature, unique, as a list of 1-D tensors."""
    qs = torch.linspace(0.0, 1.0, n_bins + 1)
    return [torch.unique(torch.quantile(column, qs)) for column in X.T]


class PiecewiseLinearEncoding(nn.Module):
    def __init__(self, bins):
        super().__init__()
        n_bins = [len(b) - 1 for b in bins]
        max_n_bins = max(n_bins)
        self.n_features = len(bins)
        self.max_n_bins = max_n_bins
        edges = torch.full((len(bins), max_n_bins + 1), math.inf)
        for i, b in enumerate(bins):
            edges[i, :len(b)] = b
        self.register_buffer("edges", edges)
        self.register_buffer("n_bins", torch.tensor(n_bins))

    def forward(self, x):
        encodings = []
        for i in range(self.n_features):
            edges = self.edges[i]
            xi = x[:, i].contiguous()
            idx = torch.bucketize(xi, edges[1:].contiguous(), right=False)
            idx = torch.minimum(idx, self.n_bins[i] - 1)
            left = edges[idx]
            right = edges[idx + 1]
            frac = ((xi - left) / (right - left)).clamp(0.0, 1.0)
            bins = torch.arange(self.max_n_bins, device=x.device)
            enc = torch.where(bins[None] < idx[:, None], torch.ones_like(frac)[:, None],
                              torch.where(bins[None] == idx[:, None], frac[:, None],
                                          torch.zeros_like(frac)[:, None]))
            enc = enc * (bins[None] < self.n_bins[i])
            encodings.append(enc)
        return torch.stack(encodings, dim=1)


class _NLinear(nn.Module):
    def __init__(self, n, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n, in_features, out_features))
        self.bias = nn.Parameter(torch.empty(n, out_features))
        d_in_rsqrt = in_features ** -0.5
        nn.init.uniform_(self.weight, -d_in_rsqrt, d_in_rsqrt)
        nn.init.uniform_(self.bias, -d_in_rsqrt, d_in_rsqrt)

    def forward(self, x):
        x = torch.einsum("bnd,ndo->bno", x, self.weight)
        return x + self.bias


class PeriodicEmbeddings(nn.Module):
    def __init__(self, n_features, d_embedding=8, n_frequencies=6, frequency_init_scale=0.1):
        super().__init__()
        self.frequencies = nn.Parameter(torch.normal(0.0, frequency_init_scale, (n_features, n_frequencies)))
        self.linear = _NLinear(n_features, 2 * n_frequencies, d_embedding)
        self.activation = nn.ReLU()

    def forward(self, x):
        x = 2 * math.pi * self.frequencies[None] * x[..., None]
        x = torch.cat([torch.cos(x), torch.sin(x)], -1)
        return self.activation(self.linear(x))


class PLEMLP(nn.Module):
    def __init__(self, bins, n_features, d_embedding=8, d_block=32, n_classes=3):
        super().__init__()
        self.ple = PiecewiseLinearEncoding(bins)
        self.ple_linear = _NLinear(n_features, self.ple.max_n_bins, d_embedding)
        self.periodic = PeriodicEmbeddings(n_features, d_embedding)
        d_in = n_features * d_embedding * 2
        self.backbone = nn.Sequential(nn.Linear(d_in, d_block), nn.ReLU(), nn.Dropout(0.1),
                                      nn.Linear(d_block, d_block), nn.ReLU(), nn.Linear(d_block, n_classes))

    def forward(self, x_num):
        ple = self.ple_linear(self.ple(x_num))
        per = self.periodic(x_num)
        x = torch.cat([ple, per], dim=-1).flatten(1)
        return self.backbone(x)


torch.manual_seed(0)
_train = torch.randn(256, 4) * torch.tensor([1.0, 3.0, 0.5, 2.0])
model = PLEMLP(compute_bins(_train, 6), 4).eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.randn(5, 4, generator=g) * 2,)
