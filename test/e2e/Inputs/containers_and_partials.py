"""Module container slices, functools.partial, id() and inspect.unwrap, as
real model code uses them (the LLaMA family's `self.layers[:n]`, inspect's
own partials)."""
import functools
import inspect
from collections import OrderedDict
from functools import partial

import torch
import torch.nn.functional as F
from torch import nn


class Slices(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(5)])
        self.seq = nn.Sequential(OrderedDict(
            [("a", nn.Linear(4, 4)), ("b", nn.ReLU()), ("c", nn.Linear(4, 4)), ("d", nn.Tanh())]))
        self.heads = nn.ModuleDict({"x": nn.Linear(4, 2), "y": nn.Linear(4, 3)})
        self.n = 3

    def forward(self, x):
        for layer in self.layers[: self.n]:
            x = layer(x)
        for layer in self.layers[::-2]:
            x = layer(x) * 0.5
        tail = self.layers[-2:]
        x = tail[1](x) + tail[-2](x) + len(tail)
        x = self.layers[1:][1:3][0](x)
        for i, layer in enumerate(self.layers[4:1:-1]):
            x = x + i * layer(x)
        x = self.seq[1:](x) + self.seq[:2](x) + self.seq[::2][1](x)
        outs = [self.heads[k](x).sum() for k in self.heads]
        outs += [m(x).sum() for m in self.heads.values()]
        return x + sum(outs) + len(self.layers[7:])


model = Slices().eval()


def scaled(x, y, *, scale=1.0, shift=0.0):
    return x * scale + y + shift


class Partial(partial):
    pass


gelu_tanh = partial(F.gelu, approximate="tanh")


def traced(function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        return function(*args, **kwargs)
    return wrapper


@traced
def doubled(x):
    return 2 * x


def partials(x):
    add = partial(scaled, scale=2.0)
    bound = partial(add, x, shift=1.0)  # a partial of a partial: flattened
    out = bound(x + 1) + bound(y=x, scale=3.0)
    out = out + len(bound.args) + len(bound.keywords) + (bound.func is scaled)
    out = out + Partial(torch.mul, 2.0)(x) + gelu_tanh(x) + callable(bound)
    out = out + functools.reduce(partial(scaled, shift=0.5), [x, x, x])
    # inspect.unwrap memoises by id(): the wrapper chain leads to doubled's
    # own function.
    out = out + inspect.unwrap(doubled)(x) + (id(bound) == id(bound)) + (id(add) != id(bound))
    # inspect.signature of a partial: a mappingproxy of its parameters.
    parameters = inspect.signature(bound).parameters
    out = out + len(parameters) + ("scale" in parameters) + len(list(parameters.values()))
    return out


def example_inputs():
    return (torch.randn(2, 4),)


def partials_inputs():
    return (torch.randn(3),)
