# --emit=signature prints the structure of the returned value: one line per
# element, nested elements numbered by path, a single line for a lone value.
# RUN: %dync export %s:nested %s:single %s:one_tuple --emit=signature | FileCheck %s
import torch


def example_inputs():
    return [torch.randn(4, 3)]


def nested(x):
    return x.relu(), [x.sum(0), None], 3


def single(x):
    return x.neg()


def one_tuple(x):
    return (x.neg(),)


# CHECK:      # entry: {{.*}}signature.py:nested
# CHECK-NEXT: result: tuple
# CHECK-NEXT: result 0: tensor<f32, [4, 3]>
# CHECK-NEXT: result 1: list
# CHECK-NEXT: result 1.0: tensor<f32, [3]>
# CHECK-NEXT: result 1.1: none
# CHECK-NEXT: result 2: 3
# CHECK-NEXT: # entry: {{.*}}signature.py:single
# CHECK-NEXT: result: tensor<f32, [4, 3]>
# CHECK-NEXT: # entry: {{.*}}signature.py:one_tuple
# CHECK-NEXT: result: tuple
# CHECK-NEXT: result 0: tensor<f32, [4, 3]>
