"""Function defaults and properties a program reads, for
test_defaults_and_properties.py."""
import torch
from torch import nn


def scale(x, factor=2.0, offset=0.25):
    return x * factor + offset


def shift(x, *, by=0.5):
    return x - by


def with_defaults(x):
    # `offset` and `by` come from the defaults; `factor` is passed.
    return shift(scale(x, 3.0))


class Settings:
    def __init__(self):
        self._gain = 1.5

    @property
    def gain(self):
        return self._gain * 2


class Gained(nn.Module):
    def __init__(self):
        super().__init__()
        self.settings = Settings()
        self._bias = 0.125

    @property
    def bias(self):
        return self._bias + 1

    def forward(self, x):
        return x * self.settings.gain + self.bias


def example_inputs():
    return (torch.randn(3, 4),)
