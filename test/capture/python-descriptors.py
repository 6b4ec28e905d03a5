# A non-data descriptor whose class is written in Python (a `__get__` and no
# `__set__`) read from an object capture made: its `__get__` runs inlined,
# with the descriptor, the object and the class, as Python calls it. A lazy
# property that stores its value on the object is computed once, and
# torch.distributions' own lazy_property (`Categorical.probs`) reads so.
# RUN: %dync export %s:lazy %s:categorical --emit=graph | FileCheck %s
import torch
from torch.distributions import Categorical


class cached:
    def __init__(self, wrapped):
        self.wrapped = wrapped

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class Scaled:
    def __init__(self, x):
        self.x = x

    @cached
    def doubled(self):
        return self.x * 2


def lazy(x):
    s = Scaled(x)
    return s.doubled + s.doubled


def categorical(logits):
    return Categorical(logits=logits).probs


def example_inputs():
    return (torch.randn(2, 3),)

# The wrapped function runs once; the second read finds the stored value.
# CHECK-LABEL: graph @lazy(
# CHECK:      %[[D:[0-9]+]] = aten::mul.Tensor(%x, 2)
# CHECK-NEXT: %[[S:[0-9]+]] = aten::add.Tensor(%[[D]], %[[D]])
# CHECK-NEXT: return %[[S]]

# Validation of the logits (a fall-back check), then softmax for probs.
# CHECK-LABEL: graph @categorical(
# CHECK:      aten::_assert_async.msg(
# CHECK:      %[[E:[0-9]+]] = aten::exp.default(
# CHECK:      %[[P:[0-9]+]] = aten::div.Tensor(%[[E]],
# CHECK-NEXT: return %[[P]]
