"""Batch norms whose running statistics a model may tie after export: each
updates its statistics in place in training (eager's native_batch_norm,
which a graph that records autograd keeps, writes them although its schema
says not)."""
import torch
from torch import nn


class TwoNorms(nn.Module):
    def __init__(self, momenta=(0.1, 0.1)):
        super().__init__()
        self.bn1 = nn.BatchNorm1d(4, momentum=momenta[0])
        self.bn2 = nn.BatchNorm1d(4, momentum=momenta[1])

    def forward(self, x):
        return self.bn2(self.bn1(x) * 2 + 1)


class Momenta(TwoNorms):
    """Another momentum per layer: tied statistics are updated by each."""

    def __init__(self):
        super().__init__((0.1, 0.3))

    def forward(self, x):
        return self.bn2(self.bn1(x) * 2 + 1)


class Twice(nn.Module):
    """One norm called twice on one input: two updates of its statistics."""

    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(4)

    def forward(self, x):
        return self.bn(x) + self.bn(x)


def example_inputs():
    return (torch.randn(6, 4),)
