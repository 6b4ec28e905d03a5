"""Functions whose return values are tuples of types other than `tuple`:
structseqs from torch.return_types, torch.Size, and named tuples of both
kinds. test_return_types.py exports each and checks the type comes back."""
import collections
import typing

import torch

Pair = collections.namedtuple("Pair", ["values", "scale"])


class Stats(typing.NamedTuple):
    mean: torch.Tensor
    count: int
    label: str = "stats"


def example_inputs():
    return [torch.randn(4, 5)]


def max_dim(x):
    return torch.max(x, 1)


def sort(x):
    return torch.sort(x * 2, dim=1, descending=True)


def shape(x):
    return x.shape


def shape_tail(x):
    return x.relu().shape[1:]


def pair(x):
    return Pair(x.relu(), 2)


def stats(x):
    return Stats(x.mean(0), x.shape[0])


def nested(x):
    top = torch.topk(x, 2)
    return [top, x.shape], Pair(top.indices, None)


def pair_prefix(x):
    # A slice of a named tuple is a plain tuple.
    return Pair(x.neg(), 3)[:1]


def attributes(x):
    # torch's dtype, device, layout and memory format objects, rebuilt by name.
    return x.relu(), x.dtype, x.device, x.layout, torch.channels_last
