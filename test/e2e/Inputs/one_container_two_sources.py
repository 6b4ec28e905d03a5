"""One real list or dict reached through two or three sources, read whole
through each before anything changes it, then changed through each: eager
sees one object, so every change lands in it and every later read sees
them all."""
import torch
from torch import nn

SHARED = [1.0, 2.0]


class Holder:
    def __init__(self, items):
        self.items = items


class Lists(nn.Module):
    """`self.b = self.a`: lengths read through both, appends through both."""

    def __init__(self):
        super().__init__()
        self.a = [1.0, 2.0]
        self.b = self.a

    def forward(self, x):
        n = len(self.a) + len(self.b)
        self.b.append(3.0)
        self.a.append(4.0)
        return x * n * len(self.a) + self.b[-1]


class Nested(nn.Module):
    """One list as a dict's entry, a plain object's attribute and a global."""

    def __init__(self):
        super().__init__()
        self.table = {"k": SHARED}
        self.holder = Holder(SHARED)

    def forward(self, x):
        total = sum(self.table["k"]) + sum(self.holder.items) + sum(SHARED)
        self.holder.items.append(3.0)
        self.table["k"].append(4.0)
        SHARED.append(5.0)
        return x * total + len(self.table["k"]) * 100 + self.holder.items[-1] + sum(SHARED)


class Dicts(nn.Module):
    """One dict through two attributes, entries added through each."""

    def __init__(self):
        super().__init__()
        self.a = {"x": 1.0}
        self.b = self.a

    def forward(self, x):
        n = len(self.a) + len(self.b)
        self.b["y"] = 2.0
        self.a["z"] = 3.0
        return x * n * len(self.a) + sum(self.b.values())


class Edits(nn.Module):
    """Items read through both, then set, appended and popped through each."""

    def __init__(self):
        super().__init__()
        self.a = [1.0, 2.0]
        self.b = self.a

    def forward(self, x):
        first = self.a[0] + self.b[1]
        self.b[0] = 10.0
        self.a.append(7.0)
        self.b.pop(1)
        return x * first + sum(self.a) * 100 + len(self.b)


def lists_given_twice(x, a, b):
    n = len(a) + len(b)
    b.append(3.0)
    a.append(4.0)
    return x * n * len(a) + b[-1]


def example_inputs():
    return (torch.randn(3),)


def example_lists_given_twice():
    both = [1.0, 2.0]
    return (torch.randn(3), both, both)
