"""Sources that reach one object, or two: lists an instance holds twice or
once each, a list or tensor passed twice, tied weights; and what capture
must refuse or guard around them (a list read without a source changed in
place, class attributes a user object's methods read, bool/tensor mixes
eager rejects)."""
import torch
from torch import nn


class SharedLists(nn.Module):
    """`self.a is self.b`: appending through one is seen through the other."""

    def __init__(self):
        super().__init__()
        self.a = [1.0]
        self.b = self.a

    def forward(self, x):
        self.a.append(2.0)
        return x * len(self.b)


class SplitLists(nn.Module):
    """The same program over two lists."""

    def __init__(self):
        super().__init__()
        self.a = [1.0]
        self.b = [1.0]

    def forward(self, x):
        self.a.append(2.0)
        return x * len(self.b)


class Tied(nn.Module):
    """An output projection tied to the embedding's weight."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Linear(4, 4, bias=False)
        self.out = nn.Linear(4, 4, bias=False)
        self.out.weight = self.emb.weight

    def forward(self, x):
        return self.out(torch.tanh(self.emb(x)))


class TwoNorms(nn.Module):
    """Two batch norms in training: each writes its running statistics in
    place, and a model may share one set between them after export."""

    def __init__(self):
        super().__init__()
        self.bn1 = nn.BatchNorm1d(4)
        self.bn2 = nn.BatchNorm1d(4)

    def forward(self, x):
        return self.bn2(self.bn1(x) * 2 + 1)


def example_twonorms():
    return (torch.randn(6, 4),)


def append_then_count(x, a, b):
    a.append(2.0)
    return x * len(b)


def add_into(x, y):
    x.add_(1.0)
    return y * 2


def same_or_not(x, y):
    if x is y:
        return x * 2
    return x - y


class Scaled:
    """Methods that read the class's attributes through type(self) and
    self.__class__."""

    base = 2.0
    shift = 1.0

    def __init__(self):
        self.k = 3.0

    def factor(self):
        return self.k * type(self).base

    def offset(self):
        return self.__class__.shift


CONFIG = Scaled()


def method_reads(x):
    return x * CONFIG.factor() + CONFIG.offset()


def example_inputs():
    return (torch.randn(3),)


def example_append_then_count():
    return (torch.randn(3), [1.0], [1.0])


def example_add_into():
    return (torch.randn(3), torch.randn(3))


example_same_or_not = example_add_into


def example_method_reads():
    return (torch.randn(3),)


def example_tied():
    return (torch.randn(2, 4),)
