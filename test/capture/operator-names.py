# A Python operator on tensors that torch refuses is named in the error as
# the `operator` module's function with the expression it computes, the
# words of the function's own docstring: "operator.add (a + b)", never
# CPython's private module name `_operator`. torch's own message follows.
# RUN: not %dync export %s:add --emit=graph 2>&1 | FileCheck %s --check-prefix=ADD
# RUN: not %dync export %s:matmul --emit=graph 2>&1 | FileCheck %s --check-prefix=MATMUL
# RUN: not %dync export %s:index --emit=graph 2>&1 | FileCheck %s --check-prefix=INDEX
# RUN: not %dync export %s:add_in_place --emit=graph 2>&1 | FileCheck %s --check-prefix=IADD
import torch


def add(x, y):
    return x + y


def matmul(x, y):
    return x @ y


def index(x, y):
    return x[5] + y


def add_in_place(x, y):
    x += y
    return x


def example_inputs():
    return torch.randn(3, 4), torch.randn(5)


# ADD: operator-names.py:[[# @LINE - 20]]:12: error: calling operator.add (a + b) with the example's sizes raised RuntimeError: Attempting to broadcast a dimension of length 5
# ADD-NOT: _operator
# MATMUL: operator-names.py:[[# @LINE - 18]]:12: error: calling operator.matmul (a @ b) with the example's sizes raised RuntimeError:
# INDEX: operator-names.py:[[# @LINE - 15]]:12: error: calling operator.getitem (a[b]) with the example's sizes raised IndexError: index 5 is out of bounds for dimension 0 with size 3
# IADD: operator-names.py:[[# @LINE - 12]]:5: error: calling operator.iadd (a += b) with the example's sizes raised RuntimeError:
