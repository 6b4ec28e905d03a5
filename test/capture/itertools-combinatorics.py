# itertools' combinatoric iterators (product, with repeat; combinations;
# permutations; pairwise) are unrolled while capturing, in CPython's order,
# over any values (sliding-window offsets over every axis, pairs of
# tensors). Past 65536 items capture refuses to unroll, at the program's line.
# RUN: %dync export %s:combinatorics %s:tensor_pairs --emit=graph | FileCheck %s
# RUN: not %dync export %s:too_many --emit=graph 2>&1 | FileCheck %s --check-prefix=MANY
import itertools

import torch


def combinatorics(x):
    grid = list(itertools.product(range(2), "ab"))
    twice = list(itertools.product([0, 1], repeat=2))
    combos = list(itertools.combinations([1, 2, 3], 2))
    perms = list(itertools.permutations([1, 2, 3], 2))
    orders = list(itertools.permutations("ab"))
    steps = list(itertools.pairwise([1, 4, 9]))
    return x * len(grid), grid, twice, combos, perms, orders, steps

# CHECK-LABEL: graph @combinatorics(
# CHECK-NEXT:  %0 = aten::mul.Tensor(%x, 4)
# CHECK-NEXT:  return (%0, [(0, "a"), (0, "b"), (1, "a"), (1, "b")], [(0, 0), (0, 1), (1, 0), (1, 1)], [(1, 2), (1, 3), (2, 3)], [(1, 2), (1, 3), (2, 1), (2, 3), (3, 1), (3, 2)], [("a", "b"), ("b", "a")], [(1, 4), (4, 9)])


def tensor_pairs(x):
    parts = [x, x + 1, x * 2]
    crossed = sum(a * b for a, b in itertools.combinations(parts, 2))
    rises = [b - a for a, b in itertools.pairwise(parts)]
    return crossed, rises[1]

# CHECK-LABEL: graph @tensor_pairs(
# CHECK-NEXT:  %0 = aten::add.Tensor(%x, 1)
# CHECK-NEXT:  %1 = aten::mul.Tensor(%x, 2)
# CHECK-NEXT:  %2 = aten::mul.Tensor(%x, %0)
# CHECK-NEXT:  %3 = aten::mul.Tensor(%x, %1)
# CHECK-NEXT:  %4 = aten::mul.Tensor(%0, %1)
# CHECK-NEXT:  %5 = aten::add.Tensor(%2, 0)
# CHECK-NEXT:  %6 = aten::add.Tensor(%5, %3)
# CHECK-NEXT:  %7 = aten::add.Tensor(%6, %4)
# CHECK-NEXT:  %8 = aten::sub.Tensor(%0, %x)
# CHECK-NEXT:  %9 = aten::sub.Tensor(%1, %0)
# CHECK-NEXT:  return (%7, %9)


def too_many(x):
    return x * len(list(itertools.product(range(100), repeat=3)))

# MANY: itertools-combinatorics.py:[[@LINE-2]]:25: error: itertools.product() gives more than 65536 items, more than capture unrolls; loop over a tensor dimension instead


def example_inputs():
    return (torch.randn(2, 3),)
