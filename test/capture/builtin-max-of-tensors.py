# Python's max and min of tensors return one of them as the truth of a
# comparison of their data decides (I-BERT's quantization range takes
# `max(lo.abs(), hi.abs())`): a decision on data, specialized to the
# example's side with a fall-back check, or with --data-branches=refuse
# refused at the line with the elementwise operation the graph has instead.
# Over numbers and sizes they are CPython's; over tuples and strs too, and
# over objects of the program's classes each comparison calls the class's
# __lt__ or __gt__ (torch.distributions' kl_divergence picks its most
# specific rule so, by min() of _Match objects, on a cold export).
# RUN: %dync export %s:sizes --emit=graph | FileCheck %s
# RUN: %dync export %s:of_sums --emit=graph 2>&1 | FileCheck %s --check-prefix=SPECIALIZED
# RUN: not %dync export --data-branches=refuse %s:of_tensors --emit=graph 2>&1 | FileCheck %s --check-prefix=TENSORS
# RUN: not %dync export --data-branches=refuse %s:of_rows --emit=graph 2>&1 | FileCheck %s --check-prefix=ROWS
# RUN: %dync export %s:of_tuples --emit=graph | FileCheck %s --check-prefix=TUPLES
# RUN: %dync export %s:of_objects --emit=graph | FileCheck %s --check-prefix=OBJECTS
# RUN: %dync export %s:kl --emit=graph | FileCheck %s --check-prefix=KL
# RUN: not %dync export %s:unordered --emit=graph 2>&1 | FileCheck %s --check-prefix=UNORDERED
import torch
from torch.distributions import Normal, kl_divergence


class Version:
    def __init__(self, *parts):
        self.parts = parts

    def __lt__(self, other):
        return self.parts < other.parts

    def __gt__(self, other):
        return self.parts > other.parts


def sizes(x):
    return x.new_zeros(max(x.shape[0], 3), min(x.shape[1], 2, 7) * len(max("ab", "b")))


def of_tensors(x):
    return max(x.min().abs(), x.max().abs()) * 2


def of_sums(x):
    total = x.abs().sum()
    return max(total, total + 1) * x


def of_rows(x):
    return min(x)


def of_tuples(x):
    return x * max((1, 2), (1, 3))[1]


def of_objects(x):
    versions = [Version(1, 4), Version(2, 0), Version(1, 9)]
    return x * min(versions).parts[1] + max(v for v in versions).parts[0]


def kl(x):
    return kl_divergence(Normal(x, x.exp()), Normal(torch.zeros_like(x), torch.ones_like(x)))


class Unordered:
    pass


def unordered(x):
    return x if max(Unordered(), Unordered()) else -x


def example_inputs():
    return (torch.randn(4, 5),)

# CHECK-LABEL: graph @sizes
# CHECK: aten::full.default([4, 2], 0,

# SPECIALIZED: note: of_sums: builtin-max-of-tensors.py:43: the decision on tensor data (return max(total, total + 1) * x) is specialized to the example's side (True)
# SPECIALIZED: %[[TOTAL:[0-9]+]] = aten::sum.dim_IntList(
# SPECIALIZED-NEXT: %[[MORE:[0-9]+]] = aten::add.Tensor(%[[TOTAL]], 1)
# SPECIALIZED-NEXT: %[[GT:[0-9]+]] = aten::gt.Tensor(%[[MORE]], %[[TOTAL]]) : tensor<bool, []>
# SPECIALIZED-NEXT: aten::_assert_async.msg(%[[GT]], "fall back: the decision on tensor data at builtin-max-of-tensors.py:43 takes the other side than the example's (True), to which the graph was specialized")
# SPECIALIZED-NEXT: aten::mul.Tensor(%[[MORE]], %x)

# TENSORS: builtin-max-of-tensors.py:38:12: error: max() of tensors decides which to return by the truth of a comparison of their data: data-dependent branch: the condition depends on a tensor's values, {{.*}} (torch.maximum is the graph's elementwise max)
# TENSORS-NEXT: return max(x.min().abs(), x.max().abs()) * 2

# ROWS: builtin-max-of-tensors.py:47:12: error: min() of tensors decides which to return by the truth of a comparison of their data: data-dependent branch: {{.*}} (torch.minimum is the graph's elementwise min)

# TUPLES-LABEL: graph @of_tuples
# TUPLES: aten::mul.Tensor(%x, 3)

# OBJECTS-LABEL: graph @of_objects
# OBJECTS: %[[LOW:[0-9]+]] = aten::mul.Tensor(%x, 4)
# OBJECTS-NEXT: aten::add.Tensor(%[[LOW]], 2)

# KL-LABEL: graph @kl
# KL: aten::exp.default(%x)
# KL: return

# UNORDERED: builtin-max-of-tensors.py:{{[0-9]+}}:17: error: comparing 'object made while capturing' > 'object made while capturing' is not supported
# UNORDERED-NEXT: return x if max(Unordered(), Unordered()) else -x
