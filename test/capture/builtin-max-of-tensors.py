# Python's max and min of tensors return one of them as the truth of a
# comparison of their data decides (I-BERT's quantization range takes
# `max(lo.abs(), hi.abs())`): a branch on data, refused at the line with
# the elementwise operation the graph has instead. Over numbers and sizes
# they are CPython's; over containers refused naming the type.
# RUN: %dync export %s:sizes --emit=graph | FileCheck %s
# RUN: not %dync export %s:of_tensors --emit=graph 2>&1 | FileCheck %s --check-prefix=TENSORS
# RUN: not %dync export %s:of_rows --emit=graph 2>&1 | FileCheck %s --check-prefix=ROWS
# RUN: not %dync export %s:of_tuples --emit=graph 2>&1 | FileCheck %s --check-prefix=TUPLES
import torch


def sizes(x):
    return x.new_zeros(max(x.shape[0], 3), min(x.shape[1], 2, 7) * len(max("ab", "b")))


def of_tensors(x):
    return max(x.min().abs(), x.max().abs()) * 2


def of_rows(x):
    return min(x)


def of_tuples(x):
    return x * max((1, 2), (1, 3))[1]


def example_inputs():
    return (torch.randn(4, 5),)

# CHECK-LABEL: graph @sizes
# CHECK: aten::full.default([4, 2], 0,

# TENSORS: builtin-max-of-tensors.py:18:12: error: max() of tensors decides which to return by the truth of a comparison of their data; no symbolic bools yet (torch.maximum is the graph's elementwise max)
# TENSORS-NEXT: return max(x.min().abs(), x.max().abs()) * 2

# ROWS: builtin-max-of-tensors.py:22:12: error: min() of tensors decides which to return by the truth of a comparison of their data; no symbolic bools yet (torch.minimum is the graph's elementwise min)

# TUPLES: builtin-max-of-tensors.py:26:16: error: max() of 'tuple' values is not supported: only of numbers
