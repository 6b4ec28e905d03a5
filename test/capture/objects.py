# Objects of the program's own classes made while capturing: dataclasses
# (frozen, with slots, through dataclasses.replace), plain classes whose
# __init__ assigns attributes, properties, special methods, named tuples.
# They exist only in capture; what they hold is symbolic, tensors included.
# RUN: %dync export %s:options %s:holder %s:named %s:single %s:equality --emit=graph \
# RUN:   | FileCheck %s
# Each refused program is an entry of one export that goes on past each
# refusal, and each refusal is reported at its line, in entry order.
# RUN: not %dync export %s:frozen %s:to_torch %s:c_class --keep-going --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefixes=FROZEN,TORCH,CCLASS
import array
import collections
import dataclasses
from typing import NamedTuple

import torch


@dataclasses.dataclass(frozen=True, slots=True)
class Options:
    scale: float = 2.0
    shift: int = 1

    def __post_init__(self):
        if self.scale <= 0:
            raise ValueError(f"scale must be positive, got {self.scale!r}")


def options(x):
    o = dataclasses.replace(Options(), shift=3)
    return x * o.scale + o.shift

# CHECK-LABEL: graph @options(
# CHECK-NEXT:  aten::mul.Tensor(%x, 2.0)
# CHECK-NEXT:  aten::add.Tensor(%{{[0-9]+}}, 3)


class Holder:
    def __init__(self, tensor, factor):
        self.tensor = tensor
        self.factor = factor

    @property
    def scaled(self):
        return self.tensor * self.factor

    def __len__(self):
        return self.factor


def holder(x):
    h = Holder(x, 3)
    h.factor += 1
    if h:
        return h.scaled
    return x

# CHECK-LABEL: graph @holder(
# CHECK-NEXT:  aten::mul.Tensor(%x, 4)


class Pair(NamedTuple):
    first: torch.Tensor
    second: torch.Tensor


Point = collections.namedtuple("Point", ["x", "y"])


def named(x):
    p = Pair(x, x + 1)
    q = Point(2, y=3)
    return p.second - p.first * q.y

# CHECK-LABEL: graph @named(
# CHECK-NEXT:  aten::add.Tensor(%x, 1)
# CHECK-NEXT:  aten::mul.Tensor(%x, 3)
# CHECK-NEXT:  aten::sub.Tensor


Single = collections.namedtuple("Single", ["only"])


def single(x):
    # Passed to torch, a named tuple is rebuilt field by field.
    return torch.cat(Single(x * 2), 0)

# CHECK-LABEL: graph @single(
# CHECK-NEXT:  aten::mul.Tensor(%x, 2)
# CHECK-NEXT:  aten::cat.default([%{{[0-9]+}}])


def equality(x):
    same = Options() == Options(2.0, 1)
    different = Options() != Options(scale=4.0)
    return x + (same and different)

# CHECK-LABEL: graph @equality(
# CHECK-NEXT:  aten::add.Tensor(%x, true)


def frozen(x):
    o = Options()
    o.scale = 3.0
    return x

# FROZEN: objects.py:[[@LINE-3]]:5: error: the program raises dataclasses.FrozenInstanceError: cannot assign to field 'scale'


def to_torch(x):
    return torch.add(x, Holder(x, 2))

# TORCH: objects.py:[[@LINE-2]]:12: error: an object of class 'objects.Holder' made while capturing cannot be passed to a torch function


def c_class(x):
    counts = array.array("q", [1, 2, 2])
    return x * counts[2]

# CCLASS: objects.py:[[@LINE-3]]:14: error: constructing an object of class 'array.array' is not supported: its __new__ is not written in Python


def example_inputs():
    return (torch.randn(2, 3),)
