"""Function defaults and properties a program reads, for
test_defaults_and_properties.py."""
import torch
from torch import nn


def scale(x, factor=2.0, offset=0.25):
    return x * factor + offset


def shift(x, *, by=0.5):
    return x - by


def make_add(bias):
    def add(x):
        return x + bias
    return add


# A closure cell holding a tensor: a graph input read through the cell.
add_bias = make_add(torch.linspace(-1, 1, 4))


def with_defaults(x):
    # `offset` and `by` come from the defaults; `factor` is passed.
    return add_bias(shift(scale(x, 3.0)))


class Settings:
    def __init__(self):
        self._gain = 1.5

    @property
    def gain(self):
        return self._gain * 2


class Limits:
    # Slotted: the value lives in the object's own storage, not a __dict__.
    __slots__ = ("floor",)

    def __init__(self, floor):
        self.floor = floor


class Gained(nn.Module):
    # A class attribute holding a tensor, read through the instance.
    rows = torch.tensor([2.0, -1.0, 0.5, 3.0])

    def __init__(self):
        super().__init__()
        self.settings = Settings()
        self._bias = 0.125
        self.limits = Limits(-2.0)

    @property
    def bias(self):
        return self._bias + 1

    def forward(self, x):
        y = x * self.settings.gain * self.rows + self.bias
        return y.clamp(min=self.limits.floor)


def example_inputs():
    return (torch.randn(3, 4),)
