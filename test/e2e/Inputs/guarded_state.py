"""State the compiled path depends on beyond its arguments: hook tables,
class attributes, closure cells, module-level helpers, forward methods and
the exact type and dispatch bits of tensor inputs (test_guarded_state.py
changes each after loading and checks the call misses and matches eager)."""
import torch
from torch import nn


def act(x):
    return torch.relu(x)


def make_scaled(factor):
    def scaled(x):
        return x * factor

    return scaled


scaled = make_scaled(2.0)


class Hooked(nn.Module):
    """Hooks on a submodule, global module hooks, forward replaced on the
    instance or on nn.Linear."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)


class Scaled(nn.Module):
    """A class attribute read through self."""

    scale = 0.5

    def forward(self, x):
        return x * self.scale


class Helpers(nn.Module):
    """A module-level helper and a closure cell read through another."""

    def forward(self, x):
        return act(scaled(x))


def affine(x):
    """Tensor inputs of another class or with the negative bit."""
    return x * 2 + 1


def rotate(z):
    """Complex inputs with the conjugate bit."""
    return z * z


def example_inputs():
    return (torch.linspace(-2.0, 2.0, 8).reshape(2, 4),)


def complex_inputs():
    return (torch.complex(torch.linspace(-1.0, 1.0, 4), torch.linspace(0.5, -0.5, 4)),)
