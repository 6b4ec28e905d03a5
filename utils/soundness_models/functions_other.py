"""A helper module whose functions another module calls, and which read
this module's own globals."""
import torch

OFFSET = 0.5
FACTORS = [1.0, 2.0]


def shift(x):
    return x - 0.5


def inner(x):
    return x * 1.5


def scaled(x):
    return inner(x) * FACTORS[1] + OFFSET


def unused(x):
    return torch.cosh(x)
