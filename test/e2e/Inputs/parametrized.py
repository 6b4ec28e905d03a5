"""A model whose weights are computed: a parametrization of the program's
own (two chained on one weight), torch's weight_norm, orthogonal and
spectral_norm parametrizations, and the old weight_norm forward pre-hook. Spectral norm's
power iteration updates its `_u`/`_v` buffers in place in training mode.
"""
import torch
from torch import nn
import torch.nn.utils.parametrize as parametrize
from torch.nn.utils.parametrizations import orthogonal, spectral_norm, weight_norm


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


class Scaled(nn.Module):
    def __init__(self, factor):
        super().__init__()
        self.factor = factor

    def forward(self, X):
        return X * self.factor


class Parametrized(nn.Module):
    def __init__(self, spectral_training=False):
        super().__init__()
        self.own = nn.Linear(4, 4)
        parametrize.register_parametrization(self.own, "weight", Symmetric())
        parametrize.register_parametrization(self.own, "weight", Scaled(0.5))
        self.normed = weight_norm(nn.Linear(4, 5))
        self.orth = orthogonal(nn.Linear(5, 5))
        self.spectral = spectral_norm(nn.Linear(5, 3))
        self.spectral.train(spectral_training)
        self.old = nn.utils.weight_norm(nn.Linear(3, 2))

    def forward(self, x):
        h = torch.tanh(self.own(x))
        h = self.orth(self.normed(h))
        h = self.spectral(h)
        return self.old(h)


def example_inputs():
    return (torch.randn(3, 4),)


class TrainingSpectral(Parametrized):
    """Spectral norm in training mode: each call runs a power iteration
    that writes `_u` and `_v` in place (under no_grad), a change the graph
    makes to the real buffers."""

    def __init__(self):
        super().__init__(spectral_training=True)

    def forward(self, x):
        return self.spectral(x[:, :1].expand(-1, 5) * self.own(x).sum(-1, keepdim=True))
