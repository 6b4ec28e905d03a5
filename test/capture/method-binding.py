# A function bound to an object by hand, as Python's descriptor protocol
# binds it: `func.__get__(obj)` and `types.MethodType(func, obj)` give the
# method (the object first when it runs), `func.__get__(None, cls)` the
# function itself; `__get__(None, None)` raises TypeError as Python does.
# functools.singledispatchmethod binds the implementation it picks so, but
# its dispatcher caches the choice per class, which capture refuses in
# plain words at the program's line.
# RUN: %dync export %s:Net.forward --emit=graph | FileCheck %s
# RUN: not %dync export %s:unbound_none --emit=graph 2>&1 | FileCheck %s --check-prefix=NONE
# RUN: not %dync export %s:Dispatching.forward --emit=graph 2>&1 | FileCheck %s --check-prefix=DISPATCH
import functools
import types

import torch
from torch import nn


def scaled(self, x):
    return x * self.factor


class Other:
    factor = 3.0


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.factor = 2.0

    def forward(self, x):
        bound = scaled.__get__(self)
        same = scaled.__get__(None, Net)
        made = types.MethodType(scaled, self)
        return bound(x), same(Other(), x), made(x) + 1, types.MethodType(torch.add, x)(1)

# CHECK-LABEL: graph @Net.forward(
# CHECK:       %[[A:[0-9]+]] = aten::mul.Tensor(%x, 2.0)
# CHECK-NEXT:  %[[B:[0-9]+]] = aten::mul.Tensor(%x, 3.0)
# CHECK-NEXT:  %[[C:[0-9]+]] = aten::mul.Tensor(%x, 2.0)
# CHECK-NEXT:  %[[D:[0-9]+]] = aten::add.Tensor(%[[C]], 1)
# CHECK-NEXT:  %[[E:[0-9]+]] = aten::add.Tensor(%x, 1)
# CHECK-NEXT:  return (%[[A]], %[[B]], %[[D]], %[[E]])


def unbound_none(x):
    return scaled.__get__(None)(x)

# NONE: method-binding.py:[[@LINE-2]]:12: error: {{.*}}TypeError: __get__(None, None) is invalid


class Dispatching(nn.Module):
    @functools.singledispatchmethod
    def encode(self, item):
        raise TypeError("cannot encode")

    @encode.register
    def _(self, item: torch.Tensor):
        return torch.tanh(item)

    def forward(self, x):
        return self.encode(x)

# DISPATCH: method-binding.py:[[@LINE-2]]:16: error: dispatching by functools.singledispatch or singledispatchmethod is not supported yet: the dispatcher keeps its choice per class in a cache of its own, which a graph cannot fill; choose the implementation with isinstance() checks, or call it directly


def example_inputs():
    return (torch.randn(3),)
