"""Entries whose code has free variables: a forward decorated with a
functools.wraps wrapper that reads the function it wraps and its settings
from closure cells, and a plain function made by a factory."""
import functools

import torch
from torch import nn


class Settings:
    def __init__(self, factor):
        self.factor = factor


def scaled_by(settings, offset):
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return fn(*args, **kwargs) * settings.factor + offset

        return wrapper

    return decorate


class Decorated(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    @scaled_by(Settings(2.0), 0.5)
    def forward(self, x):
        return torch.relu(self.fc(x))


def tanh_forward(self, x):
    return torch.tanh(self.fc(x))


def make_entry(bias, mode):
    def shifted(x):
        return x + bias if mode == "add" else x - bias

    return shifted


shifted = make_entry(torch.ones(4), "add")
# Reachable from the module by its name, as a decorated function is.
shifted.__qualname__ = "shifted"


def cell(function, name):
    """The closure cell of `function` that holds its free variable `name`."""
    return function.__closure__[function.__code__.co_freevars.index(name)]


def example_inputs():
    return (torch.randn(3, 4),)


def example_shifted():
    return (torch.randn(3, 4),)
