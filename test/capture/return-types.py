# The graph's return value names the type of a returned tuple that is not a
# plain tuple: structseqs of torch.return_types, torch.Size (kept by
# slicing), named tuples; a field read by name is the element it names, and
# a slice of a named tuple is a plain tuple, as in Python.
# RUN: %dync export %s:structseq %s:size %s:named %s:typed %s:fields %s:prefix --dynamic 'x:0=n[2,64]' --emit=graph | FileCheck %s
import collections
import typing

import torch

Pair = collections.namedtuple("Pair", ["values", "scale"])


class Stats(typing.NamedTuple):
    mean: torch.Tensor
    count: int


def example_inputs():
    return [torch.randn(4, 5)]


def structseq(x):
    return torch.sort(x)


def size(x):
    return x.shape, x.shape[1:]


def named(x):
    return Pair(x.relu(), 2.0)


def typed(x):
    return Stats(x.mean(0), x.shape[0])


def fields(x):
    out = torch.max(x, 1)
    return out.values, out.indices


def prefix(x):
    return Pair(x.relu(), 2.0)[:1]


# CHECK-LABEL: graph @structseq(
# CHECK:         return torch.return_types:sort(%0#0, %0#1)
# CHECK-LABEL: graph @size(
# CHECK:         return (torch:Size(n, 5), torch:Size(5))
# CHECK-LABEL: graph @named(
# CHECK:         return "return-types":Pair(%0, 2.0)
# CHECK-LABEL: graph @typed(
# CHECK:         return "return-types":Stats(%0, n)
# CHECK-LABEL: graph @fields(
# CHECK:         %0 = aten::max.dim(%x, 1)
# CHECK:         return (%0#0, %0#1)
# CHECK-LABEL: graph @prefix(
# CHECK:         return (%0,)
