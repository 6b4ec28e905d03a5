"""Functions read through modules: torch's (`torch.relu`, `F.silu` in the
program, `F.gelu` inside nn.GELU's forward) and a helper module's globals
read by its own functions (test_library_globals.py replaces each after
loading and checks the call misses and matches eager)."""
import torch
import torch.nn.functional as F
from torch import nn

import library_globals_helper as helper


class Library(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.GELU()

    def forward(self, x):
        y = torch.relu(x) + F.silu(x)
        return helper.scaled(self.act(y))


def example_inputs():
    return (torch.linspace(-2.0, 2.0, 8).reshape(2, 4),)


class Config:
    """A user object (not an nn.Module) with a method and a property."""

    def __init__(self):
        self._factor = 2.0

    @property
    def factor(self):
        return self._factor * 1.5

    def scaled(self, x):
        return x * self._factor - 1


class WithConfig(nn.Module):
    def __init__(self):
        super().__init__()
        self.cfg = Config()

    def forward(self, x):
        return self.cfg.scaled(x) * self.cfg.factor


def matmul(x, w):
    """An operator autocast computes in bfloat16."""
    return torch.relu(x @ w)


def matmul_inputs():
    return (torch.linspace(-1.0, 1.0, 32).reshape(4, 8), torch.linspace(1.0, -2.0, 40).reshape(8, 5))


def layer_norms(x, w):
    """Rows of zeros (some -0.0): eager's layer norm gives +0.0 for each,
    with and without an affine weight."""
    z = x * 0.0 - 0.0
    return F.layer_norm(z, (5,)), F.layer_norm(z, (5,), w)


def layer_norm_inputs():
    return (torch.tensor([[1.0, -2.0, 3.0, -4.0, 5.0], [-1.0, -1.0, 2.0, 0.5, -3.0]]),
            torch.tensor([1.0, -1.0, 2.0, -0.5, 3.0]))
