"""Dicts keyed by constants other than str: a model's int- and bool-keyed
dicts (one holding a tensor), a class attribute keyed by tuples, a global
keyed by negative ints, a closure cell's dict keyed by None and a float, and
an OrderedDict global keyed by ints. Each entry forward reads is read through
its key, and the keys are pinned with their types: 1, 1.0 and True are one
dict key to Python but give other results when the program uses the key.
Also the end-to-end test's program (test/e2e/test_dict_keys.py)."""
import collections

import torch
from torch import nn

STEPS = {-1: 0.5, 2: 4.0}
ORDERED = collections.OrderedDict([(3, 1.0), (1, 2.0)])


def make_offset():
    offsets = {None: 1.0, 2.5: 2.0}

    def offset(x):
        return x + offsets[None] * offsets[2.5]

    return offset


OFFSET = make_offset()


class Keyed(nn.Module):
    table = {(1, "a"): 3.0, (2,): 7.0}

    def __init__(self):
        super().__init__()
        self.scales = {0: 2.0, 1: 3.0}
        self.flags = {True: 1.5, False: -1.0}
        self.weights = {0: torch.ones(3)}

    def forward(self, x):
        y = x * self.scales[0] + self.scales.get(1, 0.25)
        y = y * self.flags[True] + self.weights[0]
        y = y * self.table[(1, "a")] + STEPS[-1]
        # The keys themselves: an int tensor plus a float key is a float.
        counts = torch.arange(3)
        for key in self.scales:
            counts = counts + key
        return OFFSET(y), counts


def ordered(x):
    for key in ORDERED:
        x = x * ORDERED[key] + key
    return x


def example_inputs():
    return (torch.randn(3),)


def reset():
    STEPS.clear()
    STEPS.update({-1: 0.5, 2: 4.0})
    ORDERED.clear()
    ORDERED.update([(3, 1.0), (1, 2.0)])
    Keyed.table = {(1, "a"): 3.0, (2,): 7.0}
    OFFSET.__closure__[0].cell_contents = {None: 1.0, 2.5: 2.0}
