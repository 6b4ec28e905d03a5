# Idioms of library code that torch's vmap and pytree run: a nested
# function annotated with `X | None` (evaluated when it is made),
# `deque(iterable, maxlen=0)` to run an iterator for its calls,
# `itertools.accumulate` of known numbers, a lambda's `__name__`, and a
# class looked up in a frozenset. Other deques are refused.
# RUN: %dync export %s:idioms --emit=graph | FileCheck %s
# RUN: not %dync export %s:full_deque --emit=graph 2>&1 | FileCheck %s --check-prefix=DEQUE
# RUN: not %dync export %s:accumulate_with_function --emit=graph 2>&1 | FileCheck %s --check-prefix=ACCUMULATE
import collections
import itertools
import operator
from collections.abc import Callable

import torch

KINDS = frozenset({list, tuple})


def idioms(x):
    def scaled(t, f: Callable[[int], bool] | None = None, n: list[int] | None = None):
        return t * 2

    seen = []
    collections.deque(map(seen.append, [x, x + 1]), maxlen=0)
    ends = list(itertools.accumulate([1, 2, 3]))
    name = (lambda: 0).__name__
    found = type(seen) in KINDS
    return scaled(seen[1]) + ends[-1], name, found, scaled.__qualname__

# CHECK:      %0 = aten::add.Tensor(%x, 1)
# CHECK-NEXT: %1 = aten::mul.Tensor(%0, 2)
# CHECK-NEXT: %2 = aten::add.Tensor(%1, 6)
# CHECK-NEXT: return (%2, "<lambda>", true, "idioms.<locals>.scaled")


def full_deque(x):
    return collections.deque([x])

# DEQUE: iteration-idioms.py:[[@LINE-2]]:12: error: collections.deque is not supported yet, except deque(iterable, maxlen=0), which runs an iterator to its end


def accumulate_with_function(x):
    return list(itertools.accumulate([1, 2], operator.mul)), x

# ACCUMULATE: iteration-idioms.py:[[@LINE-2]]:17: error: itertools.accumulate is supported with one iterable only (no function and no initial value)


def example_inputs():
    return (torch.ones(3),)
