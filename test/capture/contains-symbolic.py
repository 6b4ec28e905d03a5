# `in` of a symbolic number in a list, tuple, set or dict held as a value:
# CPython compares it with each key by ==, a decision on the number. On a
# size it is a guard (a --dynamic size is specialized, and said so); on an
# int read from tensor data it is refused as a data-dependent branch at the
# user's line (ColBERT's `x not in skiplist`), never a silent False.
# RUN: not %dync export --data-branches=refuse %s:dicted --emit=graph 2>&1 | FileCheck %s --check-prefix=DICT
# RUN: not %dync export --data-branches=refuse %s:listed --emit=graph 2>&1 | FileCheck %s --check-prefix=LIST
# RUN: %dync export %s:sized --emit=graph | FileCheck %s --check-prefix=SIZE
# RUN: not %dync export --data-branches=refuse %s:sized --dynamic 'x:0=n[2,8]' --emit=graph 2>&1 | FileCheck %s --check-prefix=DYN
import torch

SKIP = {5: True, 6: True}


def dicted(ids):
    return [x not in SKIP for x in ids.tolist()]

# DICT: contains-symbolic.py:[[# @LINE-2]]:13: error: data-dependent branch: the condition u0 == 5 depends on u0, a value computed from tensor data by torch.Tensor.tolist


def listed(ids):
    return [x in [5, 6] for x in ids.tolist()]

# LIST: contains-symbolic.py:[[# @LINE-2]]:13: error: data-dependent branch: the condition u0 == 5 depends on u0


def sized(x):
    return x * (2 if x.shape[0] in (3, 4) else 3)

# SIZE: aten::mul.Tensor(%x, 2) : tensor<i64, [3]>
# DYN: contains-symbolic.py:[[# @LINE-3]]:22: error: --dynamic 'x:0=n[2,8]' contradicts the program: this line specializes dimension 0 of L['x'] to 3


def example_inputs():
    return (torch.tensor([5, 0, 7]),)
