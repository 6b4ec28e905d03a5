# A property read on an object made while capturing (a dataclass, a named
# tuple's computed field) runs its getter symbolically, and the getter is
# pinned where the class holds it, through the class's name: a property
# replaced on the class after export misses. A subclass that inherits the
# property is pinned not to hold the name. A named tuple's property without
# a getter raises AttributeError, as in eager.
# RUN: %dync export %s:made_dataclass %s:made_named_tuple %s:inherited --emit=guards \
# RUN:   | FileCheck %s
# RUN: %dync export %s:made_named_tuple --emit=graph | FileCheck %s --check-prefix=GRAPH
# RUN: %dync export %s:no_getter --emit=graph | FileCheck %s --check-prefix=NOGETTER
from dataclasses import dataclass
from typing import NamedTuple

import torch


@dataclass
class Box:
    a: torch.Tensor

    @property
    def doubled(self):
        return self.a * 2


class Pair(NamedTuple):
    a: torch.Tensor
    b: torch.Tensor

    @property
    def total(self):
        return self.a + self.b

    halves = property(None)


class Triple(Pair):
    __slots__ = ()


def made_dataclass(x):
    return Box(x).doubled

# CHECK-LABEL: guards @made_dataclass(x) {
# CHECK:       function G['Box'].doubled.fget : "made-object-properties":Box.doubled line 21
# CHECK:       }


def made_named_tuple(x):
    return Pair(x, x * 3).total

# CHECK-LABEL: guards @made_named_tuple(x) {
# CHECK:       function G['Pair'].total.fget : "made-object-properties":Pair.total line 30
# CHECK:       }

# GRAPH-LABEL: graph @made_named_tuple
# GRAPH:       %0 = aten::mul.Tensor(%x, 3)
# GRAPH-NEXT:  %1 = aten::add.Tensor(%x, %0)
# GRAPH-NEXT:  return %1


def inherited(x):
    return Triple(x, x).total

# CHECK-LABEL: guards @inherited(x) {
# CHECK:       absent G['Triple'].total
# CHECK-NEXT:  function G['Pair'].total.fget : "made-object-properties":Pair.total line 30
# CHECK:       }


def no_getter(x):
    try:
        return Pair(x, x).halves
    except AttributeError:
        return x - 1

# NOGETTER-LABEL: graph @no_getter
# NOGETTER:       %0 = aten::sub.Tensor(%x, 1)
# NOGETTER-NEXT:  return %0


def example_inputs():
    return (torch.randn(3),)
