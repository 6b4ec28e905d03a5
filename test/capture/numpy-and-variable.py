# NumPy's functions of numbers run in CPython and give Python numbers;
# torch.autograd.Variable(x) is torch's legacy constructor, an alias of x.
# NumPy's random numbers differ from call to call: they are refused (arrays of
# constants: numpy-constant-arrays.py).
# RUN: %dync export %s:numpy_numbers %s:variable --emit=graph | FileCheck %s
# RUN: not %dync export %s:numpy_random --emit=graph 2>&1 | FileCheck %s --check-prefix=RANDOM
import numpy as np
import torch


def numpy_numbers(x):
    d = 16
    return x * np.sqrt(d) / np.float32(2.0)

# CHECK-LABEL: graph @numpy_numbers(
# CHECK:       aten::mul.Tensor(%x, 4.0)
# CHECK:       aten::div.Tensor(%{{[0-9]+}}, 2.0)


def variable(x):
    return torch.autograd.Variable(x) * 2

# CHECK-LABEL: graph @variable(
# CHECK:       %[[A:[0-9]+]] = aten::alias.default(%x)
# CHECK:       aten::mul.Tensor(%[[A]], 2)


def numpy_random(x):
    return x * np.random.rand()

# RANDOM: numpy-and-variable.py:[[@LINE-2]]:16: error: NumPy's random numbers


def example_inputs():
    return (torch.randn(3),)
