# A tensor with a dynamic batch and a static dimension of size 0 holds no
# elements, and torch lays it out contiguously as if that dimension were 1:
# (4, 0, 3) has strides (3, 3, 1), the contiguous strides the guard prints
# as none. The batch stays symbolic, with the
# strides torch gives at every batch size
# (test/e2e/test_dynamic_empty_dims.py calls it at several).
# RUN: %dync export %s:double --dynamic 'x:0=b[1,16]' --emit=guards | FileCheck %s
import torch


def double(x):
    return x.exp() * 2


def example_inputs():
    return (torch.randn(4, 0, 3),)

# CHECK: tensor L['x'] : tensor<f32, [b, 0, 3]>{{$}}

