"""Time-series imputation as BRITS / PyPOTS write it, on a series with
missing values given as NaN: the mask by `~torch.isnan(x)`, values by
`torch.nan_to_num`, per-feature statistics by `torch.nanmean` and a
masked variance, time gaps `deltas` accumulated in a Python loop over
steps (`torch.where` on the previous mask), temporal decay
`exp(-relu(W delta + b))` by a `TemporalDecay` module with a diagonal
option written as `F.linear(d, self.W * self.m, self.b)` against an
identity buffer, a feature regression whose weight is masked by
`1 - eye`, a `GRUCell` run over time with the complement
`m * x + (1 - m) * c_h`, the reconstruction loss summed over steps and
divided by `m.sum() + 1e-5`, the imputed series stacked."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class TemporalDecay(nn.Module):
    def __init__(self, input_size, output_size, diag=False):
        super().__init__()
        self.diag = diag
        self.W = nn.Parameter(torch.empty(output_size, input_size))
        self.b = nn.Parameter(torch.empty(output_size))
        std_dev = 1.0 / math.sqrt(self.W.size(0))
        self.W.data.uniform_(-std_dev, std_dev)
        self.b.data.uniform_(-std_dev, std_dev)
        if self.diag:
            assert input_size == output_size
            self.register_buffer("m", torch.eye(input_size, input_size))

    def forward(self, d):
        if self.diag:
            gamma = F.relu(F.linear(d, self.W * self.m, self.b))
        else:
            gamma = F.relu(F.linear(d, self.W, self.b))
        return torch.exp(-gamma)


class FeatureRegression(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.W = nn.Parameter(torch.empty(size, size))
        self.b = nn.Parameter(torch.empty(size))
        self.register_buffer("m", torch.ones(size, size) - torch.eye(size, size))
        nn.init.uniform_(self.W, -0.2, 0.2)
        nn.init.zeros_(self.b)

    def forward(self, x):
        return F.linear(x, self.W * self.m, self.b)


class RITS(nn.Module):
    def __init__(self, n_features=5, hidden=16):
        super().__init__()
        self.hidden = hidden
        self.rnn_cell = nn.GRUCell(n_features * 2, hidden)
        self.temp_decay_h = TemporalDecay(n_features, hidden, diag=False)
        self.temp_decay_x = TemporalDecay(n_features, n_features, diag=True)
        self.hist_reg = nn.Linear(hidden, n_features)
        self.feat_reg = FeatureRegression(n_features)
        self.weight_combine = nn.Linear(n_features * 2, n_features)

    def forward(self, series):
        masks = (~torch.isnan(series)).float()
        mean = torch.nanmean(series, dim=(0, 1), keepdim=True)
        centered = torch.nan_to_num(series - mean, nan=0.0)
        var = (centered.pow(2) * masks).sum(dim=(0, 1), keepdim=True) / masks.sum(dim=(0, 1), keepdim=True).clamp(min=1)
        values = centered / (var.sqrt() + 1e-5)
        B, T, D = values.shape
        deltas = [torch.zeros(B, D, device=series.device)]
        for t in range(1, T):
            deltas.append(torch.where(masks[:, t - 1] > 0, torch.ones_like(deltas[-1]), deltas[-1] + 1.0))
        h = values.new_zeros(B, self.hidden)
        x_loss = 0.0
        imputations = []
        for t in range(T):
            x, m, d = values[:, t], masks[:, t], deltas[t]
            gamma_h = self.temp_decay_h(d)
            gamma_x = self.temp_decay_x(d)
            h = h * gamma_h
            x_h = self.hist_reg(h)
            x_loss = x_loss + torch.sum(torch.abs(x - x_h) * m) / (torch.sum(m) + 1e-5)
            x_c = m * x + (1 - m) * x_h
            z_h = self.feat_reg(x_c)
            x_loss = x_loss + torch.sum(torch.abs(x - z_h) * m) / (torch.sum(m) + 1e-5)
            alpha = torch.sigmoid(self.weight_combine(torch.cat([gamma_x, m], dim=1)))
            c_h = alpha * z_h + (1 - alpha) * x_h
            x_loss = x_loss + torch.sum(torch.abs(x - c_h) * m) / (torch.sum(m) + 1e-5)
            c_c = m * x + (1 - m) * c_h
            h = self.rnn_cell(torch.cat([c_c, m], dim=1), h)
            imputations.append(c_c.unsqueeze(dim=1))
        imputed = torch.cat(imputations, dim=1) * (var.sqrt() + 1e-5) + mean
        return {"imputed_data": imputed, "loss": x_loss / T}


torch.manual_seed(0)
model = RITS().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(3, 8, 5, generator=g)
    x[torch.rand(3, 8, 5, generator=g) < 0.3] = float("nan")
    return x
