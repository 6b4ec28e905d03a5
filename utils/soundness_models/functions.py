"""Functions a forward calls: module-level helpers, closures, a function of
another module, submodules' forward methods."""
import torch
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


def example_inputs():
    return (torch.randn(3, 4),)
