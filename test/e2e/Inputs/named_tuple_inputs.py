"""Inputs that are named tuples: their tensors are graph inputs read by
position, their class and length are pinned, and the other fields are
guarded as a plain tuple's items are."""
import collections
import typing

import torch
from torch import nn

Batch = collections.namedtuple("Batch", ["x", "mask"])
Lookalike = collections.namedtuple("Lookalike", ["x", "mask"])


class Options(typing.NamedTuple):
    scale: float
    inner: Batch


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.lin = nn.Linear(4, 4)

    def forward(self, batch, options):
        # Fields by name and by position, unpacking and len().
        x, mask = batch
        y = self.lin(batch.x) * mask + batch[0] * options.scale
        return y + options.inner.x.sum() * len(options.inner)


model = Model()


def example_inputs():
    return (Batch(torch.randn(2, 4, requires_grad=True), torch.ones(2, 4)),
            Options(0.5, Batch(torch.randn(3), torch.zeros(3))))
