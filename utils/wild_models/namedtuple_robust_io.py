"""A sensor-fusion regressor with the input and output conventions of
robotics and time-series code bases: forward takes one dict of tensors
(`batch["signal"]`, `batch["mask"]`, `batch["static"]`) and returns a
`typing.NamedTuple` with defaults, built by keyword; the signal robustly
normalised per channel by its median and median absolute deviation
(`torch.median(dim=...)` returning values and indices, a quantile by
`torch.kthvalue`), missing steps masked out by `masked_fill` before the
statistics, and a GRU over time whose last hidden state meets the static
features."""
from typing import NamedTuple, Optional

import torch
from torch import nn


class Prediction(NamedTuple):
    mean: torch.Tensor
    log_scale: torch.Tensor
    center: torch.Tensor
    spread: Optional[torch.Tensor] = None
    upper: Optional[torch.Tensor] = None


class RobustScaler(nn.Module):
    def __init__(self, eps=1e-5, upper_q=0.75):
        super().__init__()
        self.eps = eps
        self.upper_q = upper_q

    def forward(self, x, mask):
        # x: [b, t, c]; statistics over time, masked steps replaced by the
        # channel's first observed value so they do not move the median
        filled = torch.where(mask.unsqueeze(-1), x, x[:, :1])
        center, _ = filled.median(dim=1, keepdim=True)
        spread = (filled - center).abs().median(dim=1, keepdim=True).values
        k = max(1, int(round(self.upper_q * x.shape[1])))
        upper = torch.kthvalue(filled, k, dim=1, keepdim=True).values
        scaled = (x - center) / (spread + self.eps)
        return scaled.masked_fill(~mask.unsqueeze(-1), 0.0), center, spread, upper


class FusionRegressor(nn.Module):
    def __init__(self, channels=3, static=4, hidden=16):
        super().__init__()
        self.scaler = RobustScaler()
        self.rnn = nn.GRU(channels + 1, hidden, batch_first=True)
        self.static = nn.Sequential(nn.Linear(static, hidden), nn.Tanh())
        self.out = nn.Linear(hidden * 2, 2 * channels)

    def forward(self, batch):
        signal, mask = batch["signal"], batch["mask"]
        scaled, center, spread, upper = self.scaler(signal, mask)
        features = torch.cat([scaled, mask.unsqueeze(-1).to(scaled.dtype)], dim=-1)
        _, h = self.rnn(features)
        joint = torch.cat([h[-1], self.static(batch["static"])], dim=-1)
        mean, log_scale = self.out(joint).chunk(2, dim=-1)
        mean = mean * spread.squeeze(1) + center.squeeze(1)
        return Prediction(mean=mean, log_scale=log_scale, center=center, spread=spread, upper=upper)


torch.manual_seed(0)
model = FusionRegressor().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    b, t, c = 2, 7, 3
    mask = torch.rand(b, t, generator=g) > 0.2
    mask[:, 0] = True
    return ({"signal": torch.randn(b, t, c, generator=g), "mask": mask,
             "static": torch.randn(b, 4, generator=g)},)
