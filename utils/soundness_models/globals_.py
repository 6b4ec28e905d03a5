"""Module globals a function reads: a constant, a tensor, a list, a dict."""
import torch

SCALE = 2.0
OFFSET = torch.linspace(-1, 1, 3)
WEIGHTS = [1.5, 0.5]
TABLE = {"a": 1.0, "b": 3.0}


def read_globals(x):
    y = x * SCALE + OFFSET
    for w in WEIGHTS:
        y = y * w
    for i, key in enumerate(TABLE):
        y = y * (i + 2) + TABLE[key]
    return y


def example_inputs():
    return (torch.randn(4, 3),)


def make_shift(shift):
    def add_shift(x):
        return x + shift
    return add_shift


add_shift = make_shift(torch.linspace(0, 1, 3))


class Table:
    """A class attribute holding a tensor."""
    rows = torch.tensor([1.0, -2.0, 0.5])


def read_held_tensors(x):
    return add_shift(x) * Table.rows
