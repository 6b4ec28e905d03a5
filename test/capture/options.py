# The export command's options: --emit is required until shared libraries
# are written, --dynamic is checked against the entry's arguments, --init and
# --example say how to call the entry, and a missing example is explained.
# RUN: not %dync export %s:Scaler.forward 2>&1 | FileCheck %s --check-prefix=NOEMIT
# RUN: not %dync export %s:Scaler.forward --emit=graph --dynamic 'x:zero=b' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=MALFORMED
# RUN: not %dync export %s:Scaler.forward --emit=graph --dynamic 'y:0=b' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=UNKNOWN
# RUN: not %dync export %s:Scaler.forward --emit=graph --dynamic 'x:0=b[8,16]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=OUTSIDE
# RUN: not %dync export %S/Inputs/no_examples.py:f --emit=graph 2>&1 | FileCheck %s --check-prefix=NOEX
# RUN: %dync export %s:Scaler.forward --emit=graph --init 'Scaler(5.0)' --example small \
# RUN:   | FileCheck %s --check-prefix=INIT
# RUN: %dync export --dynamic 'x:0=n' --dynamic 'x:1=n' %s:Scaler.forward --emit=guards \
# RUN:   --example square | FileCheck %s --check-prefix=SAME
import torch
from torch import nn


class Scaler(nn.Module):
    def __init__(self, factor=2.0):
        super().__init__()
        self.factor = factor

    def forward(self, x):
        return x * self.factor


def example_inputs():
    return (torch.randn(4, 3),)


def small():
    return torch.randn(2, 2)


def square():
    return (torch.randn(3, 3),)

# NOEMIT: dync: error: nothing to do: give -o FILE.so to write a shared library, or --emit=KIND to print what capture produces
# MALFORMED: dync: error: malformed --dynamic 'x:zero=b': 'zero' is not a dimension number
# UNKNOWN: options.py: error: --dynamic 'y:0=b' names 'y', which is not an example argument of Scaler.forward
# OUTSIDE: options.py: error: --dynamic 'x:0=b[8,16]': the example's size 4 of 'x' dimension 0 is outside the range
# NOEX: no_examples.py: error: no example inputs: define example_inputs() in the module
# INIT: graph @Scaler.forward(%x: tensor<f32, [2, 2]> = L['x'])
# INIT: aten::mul.Tensor(%x, 5.0)
# SAME: tensor L['x'] : tensor<f32, [n, n]>
# SAME: equals L['self'].factor : 2.0
