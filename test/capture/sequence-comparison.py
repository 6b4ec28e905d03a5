# == and ordering of two lists or two tuples compare them item by item, as
# CPython does, when an item is a value capture does not know: a pair of
# items is equal when identical or when `==` on them is true. On a tensor
# `n` equal to 2, `[2, n] == [2, 2]` is a decision on its data, taken as
# eager takes it (the example's side, checked when the graph runs), never
# False by the lists' identity. With --data-branches=refuse, that decision
# is refused at the user's line.
# RUN: %dync export %s:assert_count %s:ordered %s:unequal_lengths --example ordered=one_input \
# RUN:   --example unequal_lengths=one_input --emit=graph | FileCheck %s
# RUN: not %dync export %s:assert_count --data-branches=refuse --emit=graph 2>&1 | FileCheck %s --check-prefix=REFUSE
import torch


def assert_count(x, mask):
    n = mask.long().sum(dim=1).max()
    assert [x.shape[0], n] == [2, 2], f"wrong count {(x.shape[0], n)}"
    return x * n

# CHECK-LABEL: graph @assert_count(
# CHECK:       aten::max.default
# CHECK:       aten::eq.Scalar({{.*}}, 2)
# CHECK:       aten::mul.Tensor(%x,
# CHECK:       return

# REFUSE: sequence-comparison.py:{{[0-9]+}}:{{[0-9]+}}: error: data-dependent branch
# REFUSE-NEXT: assert [x.shape[0], n] == [2, 2]


def ordered(x):
    pair = (x, 3)
    same = (x, 3)
    return x + 1 if pair == same and (x, 2) < (x, 3) and [x] <= [x, 1] else x - 1

# CHECK-LABEL: graph @ordered(
# CHECK:       aten::add.Tensor(%x, 1)
# CHECK-NOT:   aten::sub
# CHECK:       return


def unequal_lengths(x):
    return x * 2 if (x, 1) != (x,) and not [x] == [x, x] else x

# CHECK-LABEL: graph @unequal_lengths(
# CHECK:       aten::mul.Tensor(%x, 2)
# CHECK:       return


def example_inputs():
    return torch.randn(2, 3), torch.tensor([[1, 1, 0], [0, 1, 1]])


def one_input():
    return (torch.randn(2, 3),)
