"""Module containers whose entries change after export: a ModuleList that
grows, a Sequential whose entries are reordered, a ModuleDict iterated in
order. The graph unrolled the entries as they were; the `keys` guards on the
containers' tables must refuse the changed ones."""
import collections

import torch
from torch import nn


class Tables(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.layers = nn.ModuleList(nn.Linear(4, 4) for _ in range(2))
        self.seq = nn.Sequential(collections.OrderedDict(
            [("scale", nn.Linear(4, 4)), ("act", nn.Tanh())]))
        self.heads = nn.ModuleDict({"a": nn.Linear(4, 4), "b": nn.Sigmoid()})

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        x = self.seq(x)
        for name in self.heads:
            x = self.heads[name](x) + 1
        return self.layers[-1](x)


model = Tables().eval()


def example_inputs():
    return (torch.randn(3, 4),)
