"""Sources that reach one object or two (test_aliased_sources.py changes the
aliasing after loading and checks the miss and eager's result), class
attributes a user object's methods read, and masked_select under a mask
that broadcasts its input (a data-dependent size whose bound torch's fake
implementation infers too small: the call falls back to the original
code)."""
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


class Walked(nn.Module):
    """Walks its modules and parameters, as transformers' `self.dtype` does:
    the walk's memo sets tell each module and parameter from every earlier
    one, so the count of parameters depends on which are one object."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)
        self.norm = nn.LayerNorm(4)
        self.act = nn.Tanh()
        self.gate = nn.Sigmoid()

    def forward(self, x):
        dtype = next(p.dtype for p in self.parameters() if p.is_floating_point())
        count = len(list(self.parameters()))
        hidden = self.norm(self.b(self.a(x)))
        return (self.act(hidden) * self.gate(hidden) * count).to(dtype)


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


def masked(x, mask):
    return torch.masked_select(x, mask) * 2


def masked_after_write(x, mask):
    x.mul_(2)
    return torch.masked_select(x, mask)


def example_inputs():
    return (torch.randn(3),)


def example_append_then_count():
    return (torch.randn(3), [1.0], [1.0])


def example_add_into():
    return (torch.randn(3), torch.randn(3))


example_same_or_not = example_add_into
example_method_reads = example_inputs


def example_tied():
    return (torch.randn(2, 4),)


example_walked = example_tied


def example_masked():
    # Two of six selected: within the bound torch infers from x's three
    # elements.
    return (torch.tensor([1.0, 2.0, 3.0]),
            torch.tensor([[True, False, False], [False, True, False]]))


example_masked_after_write = example_masked
