# Iteration the interpreter models: `yield from` (generators run to their
# end when called, so delegating is iterating the inner one), filter,
# functools.reduce, itertools.repeat and itertools.chain, and sets built
# while capturing.
# RUN: %dync export %s:delegating %s:folds %s:sets --emit=graph | FileCheck %s
import functools
import itertools
import operator

import torch


def inner(x):
    yield x
    yield x * 2


def outer(x):
    yield from inner(x)
    yield from [x + 1]


def delegating(x):
    return torch.stack(list(outer(x)))

# CHECK-LABEL: graph @delegating(
# CHECK-NEXT:  aten::mul.Tensor(%x, 2)
# CHECK-NEXT:  aten::add.Tensor(%x, 1)
# CHECK-NEXT:  aten::cat.default([%x, %{{[0-9]+}}, %{{[0-9]+}}])


def folds(x):
    sizes = tuple(itertools.repeat(2, 3))
    kept = filter(lambda t: t.dim() == 2, itertools.chain([x, x.sum()], (x * 3,)))
    total = functools.reduce(operator.add, kept)
    return total.expand(sizes + (x.shape[-1],))

# CHECK-LABEL: graph @folds(
# CHECK-NEXT:  aten::sum.dim_IntList(%x, [])
# CHECK-NEXT:  aten::mul.Tensor(%x, 3)
# CHECK-NEXT:  aten::add.Tensor(%x, %{{[0-9]+}})
# CHECK-NEXT:  aten::expand.default(%{{[0-9]+}}, [2, 2, 2, 3])


def sets(x):
    seen = set([1, 2])
    seen.add(2)
    seen.add(5)
    return x * len(seen) + (5 in seen)

# CHECK-LABEL: graph @sets(
# CHECK-NEXT:  aten::mul.Tensor(%x, 3)
# CHECK-NEXT:  aten::add.Tensor(%{{[0-9]+}}, true)


def example_inputs():
    return (torch.randn(2, 3),)
