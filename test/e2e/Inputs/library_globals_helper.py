"""A helper module whose functions read its own globals."""
import torch

OFFSET = 0.5


def inner(x):
    return x * 1.5


def scaled(x):
    return inner(x) + OFFSET


def unused(x):
    return torch.cosh(x)
