"""Module hooks, on the module itself, on a submodule, and global ones."""
import torch
from torch import nn


class Hooked(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.out = nn.Linear(6, 3)

    def forward(self, x):
        return self.out(torch.relu(self.fc(x)))


def example_inputs():
    return (torch.randn(4, 6),)


def double_output(module, args, output):
    return output * 2


def shift_input(module, args):
    return (args[0] + 1,)
