"""Functions whose result depends on torch's global state beyond grad mode,
dtype and autocast (deterministic algorithms, flush-denormal, function
modes), on module constants (torch.pi, an imported module's), on config
objects read through a closure cell, a class attribute or a default, and
on tensors read through a class attribute, a default or a helper module's
globals."""
import torch
from torch.overrides import TorchFunctionMode

import global_reads_helper as helper


def deterministic(x):
    if torch.are_deterministic_algorithms_enabled():
        return x * 2
    return x + 1


def tiny(x):
    return x * 1e-20 * 1e-20


def factory(x):
    return torch.arange(3.0) + x


def constants(x):
    import math

    return x * torch.pi + math.tau


class Shifted(TorchFunctionMode):
    """Adds 100 to every tensor addition."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        return result + 100 if func is torch.Tensor.add else result


class Config:
    def __init__(self, scale):
        self.scale = scale


def make_closed(config):
    def closed(x):
        return x * config.scale

    return closed


closed = make_closed(Config(2.0))


class Holder:
    config = Config(3.0)
    table = torch.full((3,), 2.0)


holder = Holder()


def defaulted(x, config=Config(4.0), bias=torch.ones(3)):
    return x * config.scale + bias


def configs(x):
    return closed(x) + x * Holder.config.scale + defaulted(x)


def tensors(x):
    return x * holder.table + helper.weighted(x)


def example_deterministic():
    return (torch.randn(4, 3),)


example_tiny = example_factory = example_constants = example_deterministic
example_configs = example_tensors = example_deterministic
