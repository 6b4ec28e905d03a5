# len() of a tensor is its first dimension as it is: a declared size stays
# the symbol (D-FINE's `batch_size = len(source_flatten)`), as torch.export
# reads it, where CPython's len would ask for the value and pin the batch
# ("contradicts the program: this line specializes dimension 0").
# RUN: %dync export %s:batch_len --emit=graph --dynamic 'x:0=b[1,8]' --dynamic 'x:1=s[1,8]' | FileCheck %s
import torch


def batch_len(x):
    n = len(x)
    return x.reshape(n, -1) * n, torch.arange(len(x[0]))


def example_inputs():
    return (torch.randn(3, 4, 5),)

# CHECK: graph @batch_len(%x: tensor<f32, [b, s, 5]> = L['x'])
# CHECK-NEXT: symbols { b: [2, 8], s: [2, 8] }
# CHECK: aten::view.default(%x, [b, -1]) : tensor<f32, [b, 5*s]>
# CHECK: aten::mul.Tensor(%0, b)
# CHECK: aten::arange.start_step(0, s,
