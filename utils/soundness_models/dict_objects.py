"""Dict and list subclass objects the program holds: an OrderedDict, a
defaultdict and a class deriving from dict on a module, a defaultdict cache
filled by forward, a class whose item reads are its own as a global, and a
list subclass; their items are read through sources. Also the end-to-end
test's program (test/e2e/test_held_dict_objects.py): `reset` and an entry
taking an OrderedDict of tensors."""
import collections

import torch
from torch import nn


class Table(dict):
    pass


class Scaled(dict):
    def __getitem__(self, key):
        return dict.__getitem__(self, key) * 2

    def __missing__(self, key):
        return 0.25


class Tagged(list):
    def __repr__(self):
        return "Tagged" + list.__repr__(self)


class Held(nn.Module):
    def __init__(self):
        super().__init__()
        self.order = collections.OrderedDict(b=2.0, a=torch.ones(3))
        self.counts = collections.defaultdict(int, k=3)
        self.table = Table(scale=0.5)
        self.tagged = Tagged([1.5, 2.5])

    def forward(self, x):
        y = x * self.order["b"] + self.order["a"]
        for i, key in enumerate(self.order):
            y = y + (i + 1) * len(key) * self.order[key]
        y = y * self.counts["k"] + self.counts.get("j", 7)
        y = y * self.table["scale"]
        return y + self.tagged[1]


SCALED = Scaled(factor=3.0)


def scaled(x):
    return x * SCALED["factor"] + SCALED["absent"]


class Cached(nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = collections.defaultdict(list)

    def forward(self, x):
        self.cache["seen"].append(1)
        return x * len(self.cache["seen"])


def example_scaled():
    return (torch.randn(3),)


def example_inputs():
    return (torch.randn(3),)


_SCALED_METHODS = (Scaled.__getitem__, Scaled.__missing__)


def reset():
    Scaled.__getitem__, Scaled.__missing__ = _SCALED_METHODS
    if "__getitem__" in vars(Table):
        del Table.__getitem__
    SCALED.clear()
    SCALED["factor"] = 3.0


def ordered_input(x, d):
    return x * d["w"] + d["b"]


def example_ordered_input():
    return (torch.randn(3), collections.OrderedDict(w=torch.randn(3), b=torch.randn(3)))
