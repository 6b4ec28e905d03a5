"""Functions a forward calls: module-level helpers, closures, a function of
another module, submodules' forward methods."""
import torch
import torch.nn.functional as F
from torch import nn

import functions_other as other


def helper(x):
    return x * 2


def make_bias(value):
    def add_bias(x):
        return x + value
    return add_bias


add_bias = make_bias(1.0)


class Calls(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        y = helper(self.fc(x))
        y = add_bias(y)
        return other.shift(torch.relu(y))


def make_table(values):
    def from_table(x):
        return x * values[0] + values[-1]
    return from_table


from_table = make_table([2.0, 0.25])


def with_default(x, factor=2.0):
    return x * factor


def with_kwdefault(x, *, shift=0.5):
    return x - shift


class Library(nn.Module):
    """Functions read through modules: torch's (in the program and inside
    nn.GELU's forward), a helper module's function and constants read by its
    own code, a closure cell holding a list, a function's positional and
    keyword-only defaults."""

    def __init__(self):
        super().__init__()
        self.act = nn.GELU()

    def forward(self, x):
        y = torch.sigmoid(x) + F.silu(x)
        y = other.scaled(self.act(y))
        return with_kwdefault(with_default(from_table(y)))


def example_inputs():
    return (torch.randn(3, 4),)
