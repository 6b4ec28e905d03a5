"""Module state the program changes and reads back in the same call:
torch.func.functional_call (parameters and a buffer swapped in for one call,
then the originals back), a buffer replaced through `_buffers` and read as an
attribute, a parameter removed from `_parameters` and set as a plain
attribute, an object's attribute set then read through vars(), and a global
a helper stores read back as the module's attribute."""
import sys

import torch
from torch import nn
from torch.func import functional_call


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.norm = nn.BatchNorm1d(8)
        self.fc2 = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.norm(self.fc1(x))))


class Meta(nn.Module):
    """A meta-learning step: the inner net run with fast weights."""

    def __init__(self):
        super().__init__()
        self.net = Net()

    def forward(self, x, w, mean):
        fast = {"fc1.weight": w, "norm.running_mean": mean}
        return functional_call(self.net, fast, (x,)) + self.net.fc2.bias


class Rescale(nn.Module):
    """A buffer replaced through the table, read back as an attribute."""

    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.ones(6))

    def forward(self, x):
        self._buffers["scale"] = self.scale * 2
        return x * self.scale


class Plain(nn.Module):
    """A parameter taken out of the table and set as a plain tensor."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 4)

    def forward(self, x, w):
        del self.lin._parameters["weight"]
        self.lin.weight = w
        return self.lin(x)


class Settings:
    def __init__(self):
        self.gain = 2.0


settings = Settings()
offset = 0.5
this_module = sys.modules[__name__]


def reconfigure(x):
    settings.gain = 3.0
    return x * vars(settings)["gain"]


def _set_offset(value):
    global offset
    offset = value


def shifted(x):
    _set_offset(offset + 1.0)
    return x + this_module.offset


def reset():
    global offset
    settings.gain = 2.0
    offset = 0.5


def example_inputs():
    return (torch.randn(5, 6),)


def example_meta():
    return (torch.randn(5, 6), torch.randn(8, 6, requires_grad=True), torch.randn(8))


def example_plain():
    return (torch.randn(5, 6), torch.randn(4, 6, requires_grad=True))
