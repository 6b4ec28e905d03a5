"""Global state a graph depends on beyond its arguments and the objects it
reads: torch's deterministic-algorithms switch, flush-denormal, function
modes (torch.set_default_device pushes one), the default dtype, and
constants read from torch and other modules (test_guarded_globals.py changes
each after loading and checks the call misses and matches eager)."""
import math

import torch

import guarded_globals_lib as lib


def deterministic(x):
    """Branches on the deterministic-algorithms switch."""
    if torch.are_deterministic_algorithms_enabled():
        return x * 2
    return x + 1


def tiny(x):
    """Results in the denormal range of float32, which flush-denormal zeroes."""
    return x * 1e-20 * 1e-20


def factory(x):
    """A factory call: what the default dtype and device decide."""
    return torch.arange(4.0) + x.sum()


def constants(x):
    """Constants of torch and math, and of another module read by its own
    function."""
    return x * torch.pi + torch.e - math.pi + lib.shift(x)


def example_inputs():
    return (torch.linspace(-2.0, 2.0, 8).reshape(2, 4),)


class Config:
    """A plain config object, read through a closure cell, a class
    attribute and a function default; only its attributes change."""

    def __init__(self, scale):
        self.scale = scale


def make_closed(config):
    def closed(x):
        return x * config.scale

    return closed


closed = make_closed(Config(2.0))


class Holder:
    config = Config(3.0)


def through_class(x):
    return x * Holder.config.scale


def through_default(x, config=Config(4.0), bias=torch.ones(4)):
    return x * config.scale + bias


def configs(x):
    """Config objects read through a cell, a class attribute and a default,
    and a tensor default."""
    return closed(x) + through_class(x) + through_default(x)


class Other:
    table = torch.full((4,), -7.0)


class Masked:
    """A class-attribute tensor read through an instance whose __class__
    names another class: attribute lookup finds type(obj)'s."""

    table = torch.full((4,), 2.0)

    @property
    def __class__(self):
        return Other


masked = Masked()


def reads(x):
    """A class-attribute tensor, and a tensor a helper module's function
    reads from its own globals."""
    return x * masked.table + lib.weighted(x)
