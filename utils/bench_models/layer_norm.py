"""torch.nn.LayerNorm over the last dimension of a [8192, 1024] float32
tensor, with its elementwise weight and bias.

Same size as the softmax case and for the same reason: 32 MB in and 32 MB out,
above the L3, so the figure is memory bandwidth. Mean and variance are
reductions over each row; the normalization, scale and shift are pointwise.
"""
import torch
from torch import nn


class LayerNorm(nn.Module):
    def __init__(self, features=1024):
        super().__init__()
        self.norm = nn.LayerNorm(features)
        # Not the default ones and zeros, so the affine part does real work.
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return self.norm(x)


def example_inputs():
    return (torch.randn(8192, 1024),)
