"""Tensors a factory makes, filled by in-place writes of values that require
grad (test_buffer_writes.py, test/capture/factory-buffer-writes.py): the
buffer is one tensor in eager, and every write's history reaches the
parameters that made it."""
import torch
import torch.nn as nn


class ColumnSlices(nn.Module):
    """SAINT's continuous columns: one MLP per column written into a
    torch.empty buffer slice by slice."""

    def __init__(self):
        super().__init__()
        self.mlps = nn.ModuleList([nn.Linear(1, 4) for _ in range(3)])

    def forward(self, x):
        out = torch.empty(x.size(0), 3, 4)
        for i in range(3):
            out[:, i, :] = self.mlps[i](x[:, i:i + 1])
        return out.tanh()


class MaskedRows(nn.Module):
    """Rows of a zeros buffer written by a boolean mask, then by index."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 4)
        self.b = nn.Linear(3, 4)

    def forward(self, x):
        out = torch.zeros(x.size(0), 4)
        mask = x[:, 0] > 0
        out[mask] = self.a(x[mask])
        out[~mask] = self.b(x[~mask])
        return out * 2


class ViewUpdates(nn.Module):
    """In-place updates through views of a full() buffer and of new_zeros."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(3))
        self.v = nn.Parameter(torch.randn(3))

    def forward(self, x):
        acc = torch.full((2, 3), 0.5)
        acc[0].add_(self.w * x[0])
        acc[1].mul_(self.v)
        extra = x.new_zeros(2, 3)
        extra += acc
        return acc.sum(0), extra


MODELS = ["ColumnSlices", "MaskedRows", "ViewUpdates"]


def example_inputs():
    g = torch.Generator().manual_seed(0)
    return (torch.randn(4, 3, generator=g),)
