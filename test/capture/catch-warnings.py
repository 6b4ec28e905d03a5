# A `with warnings.catch_warnings(...)` block (detectron2's Conv2d wraps
# its check of empty inputs in one) saves and restores the warnings
# module's filters, which nothing in the graph reads: it is entered and left
# without effect, and `as w` is an empty list for record=True, None
# otherwise. The block's operations join the graph as any others.
# RUN: %dync export %s:detectron2_conv %s:recorded --emit=graph | FileCheck %s
import warnings

import torch
import torch.nn.functional as F


def detectron2_conv(x, w):
    if not torch.jit.is_scripting():
        with warnings.catch_warnings(record=True):
            if x.numel() == 0:
                raise ValueError("empty input")
    return F.relu(F.conv2d(x, w))

# CHECK-LABEL: graph @detectron2_conv(
# CHECK:       aten::convolution.default(
# CHECK-NEXT:  aten::relu.default(
# CHECK:       return


def recorded(x, w):
    with warnings.catch_warnings(record=True) as caught:
        y = x * 2
    with warnings.catch_warnings() as nothing:
        y = y + 1
    return y * len(caught), nothing is None

# CHECK-LABEL: graph @recorded(
# CHECK:       aten::mul.Tensor(%x, 2)
# CHECK-NEXT:  aten::add.Tensor(%{{[0-9]+}}, 1)
# CHECK-NEXT:  aten::mul.Tensor(%{{[0-9]+}}, 0)
# CHECK-NEXT:  return (%{{[0-9]+}}, true)


def example_inputs():
    return (torch.randn(1, 2, 5, 5), torch.randn(3, 2, 3, 3))
