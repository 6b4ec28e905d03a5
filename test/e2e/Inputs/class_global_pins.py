"""Classes the program reaches through module globals: constructed, a
dataclass with a default, a module made in forward, checked with
isinstance, caught as an exception (test_class_global_pins.py)."""
from dataclasses import dataclass

import torch


class Config:
    def __init__(self, scale):
        self.scale = scale

    def apply(self, x):
        return x * self.scale


class OtherConfig:
    def __init__(self, scale):
        self.scale = scale + 1

    def apply(self, x):
        return x - self.scale


@dataclass
class Settings:
    a: float
    b: float = 1.0


@dataclass
class OtherSettings:
    a: float
    b: float = -4.0


class Block(torch.nn.Module):
    def forward(self, x):
        return x.tanh()


class OtherBlock(torch.nn.Module):
    def forward(self, x):
        return x.sigmoid()


class Problem(Exception):
    pass


class OtherProblem(Exception):
    pass


def construct(x):
    return Config(2.0).apply(x)


def settings(x):
    s = Settings(3.0)
    return x * s.a + s.b


def block(x):
    return Block()(x)


def checked(x, c):
    if isinstance(c, Config):
        return x + c.scale
    return x - 1


def caught(x):
    try:
        if x.shape[0] > 1:
            raise Problem("wide")
        return x
    except Problem:
        return x * 3
    except Exception:
        return x * 5


def example_inputs():
    return (torch.randn(4, requires_grad=True),)


def checked_inputs():
    return (torch.randn(4, requires_grad=True), Config(1.0))
