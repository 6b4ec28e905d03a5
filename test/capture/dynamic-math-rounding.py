# math.ceil, math.floor and math.trunc of sizes divided with Python's `/`
# (a mixture of experts' capacity, `math.ceil(tokens / experts)`) stay
# size expressions: integer divisions in the graph, no guard, where
# CPython's float would specialize the sizes (or capture refused the call).
# math.prod of sizes (TAPAS's `math.prod(index.batch_shape())`) is their
# product, multiplied as CPython does, where the C function specialized.
# RUN: %dync export %s:capacity --emit=graph --dynamic 'x:0=b[1,8]' --dynamic 'x:1=s[1,16]' | FileCheck %s
# RUN: %dync export %s:flat --example flat_inputs --emit=graph --dynamic 'x:0=b[1,8]' --dynamic 'x:1=s[1,16]' | FileCheck %s --check-prefix=PROD
import math

import torch


def capacity(x):
    tokens = x.shape[0] * x.shape[1]
    cap = math.ceil(tokens / 3)
    low = math.floor(tokens / 4)
    return x.reshape(-1)[:cap] * 2, torch.zeros(low), math.trunc(x.shape[1] / 2)


def flat(x):
    return x.reshape(math.prod(x.shape[:2]), -1) * math.prod(x.shape, start=2)


def example_inputs():
    return (torch.randn(2, 7),)


def flat_inputs():
    return (torch.randn(2, 7, 3),)

# CHECK: graph @capacity(%x: tensor<f32, [b, s]> = L['x'])
# CHECK-NEXT: symbols { b: [2, 8], s: [2, 16] }
# CHECK: aten::slice.Tensor(%0, 0, 0, (b*s + 2) floordiv 3) : tensor<f32, [(b*s + 2) floordiv 3]>
# CHECK: aten::full.default([b*s floordiv 4], 0,
# CHECK: return (%2, %5, s floordiv 2)

# PROD: aten::view.default(%x, [b*s, -1]) : tensor<f32, [b*s, 3]>
# PROD: aten::mul.Tensor(%0, 6*b*s)
