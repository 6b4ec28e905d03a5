"""Ints held in a config object and a tuple declared dynamic (`--dynamic
cfg.window=w[1,32]`, `--dynamic 'shape[1]=copies[1,4]'`): the window sizes a
slice and a new tensor, the copy count a repeat."""
import dataclasses

import torch
from torch import nn


@dataclasses.dataclass
class WindowConfig:
    window: int
    scale: float


class Copies(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x, cfg, shape):
        # The first cfg.window of 40 positions, weighted by their index,
        # projected and repeated along the features.
        batch, copies = shape
        head = x[:, : cfg.window] * cfg.scale
        weights = torch.arange(cfg.window, dtype=x.dtype).unsqueeze(1)
        return self.proj(head * weights).repeat(1, 1, copies)


torch.manual_seed(0)
copies = Copies().eval()


def example_inputs():
    return (torch.randn(4, 40, 8), WindowConfig(5, 0.5), (4, 2))
