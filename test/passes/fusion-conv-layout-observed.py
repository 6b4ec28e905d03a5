# A convolution's channels-last result is a layout choice the program must
# not see. `flat` views the result as one row per image, which an NCHW
# tensor allows and a channels-last one does not: capture observes that,
# runs again, and the graph converts the convolution's result back to eager
# mode's layout right after it, so the view reads the NCHW copy. A program
# reading is_contiguous() and stride() gets eager's answers and branches as
# eager mode does. A patch embedding's flatten(2) is a view in either layout
# (without the twin differing in what it shares), and a pool is read only
# for its values: both keep channels-last.
# RUN: %dync export %s:flat %s:strides %s:patch_embed %s:unobserved --emit=graph | FileCheck %s
# RUN: %dync export %s:flat -O0 --emit=graph | FileCheck %s --check-prefix=CORE
import torch
import torch.nn.functional as F

W = torch.randn(16, 3, 4, 4)
LN = torch.ones(16)


def flat(x):
    y = F.conv2d(x, W, padding=1)
    return y.view(y.shape[0], -1)


def patch_embed(x):
    tokens = F.conv2d(x, W, stride=4).flatten(2).transpose(1, 2)
    return F.layer_norm(tokens, (16,), LN)


def strides(x):
    y = F.conv2d(x, W, padding=1)
    if y.is_contiguous():
        return y + 1, y.stride()
    return y - 1, y.stride()


def unobserved(x):
    return F.max_pool2d(torch.relu(F.conv2d(x, W, stride=4)), 2)


def example_inputs():
    return (torch.randn(2, 3, 16, 16),)

# CHECK-LABEL: graph @flat(
# CHECK:       %2 = aten::convolution.default(%0, %1, {{.*}}) : tensor<f32, [2, 16, 15, 15], [3600, 1, 240, 16]>
# CHECK-NEXT:  %3 = aten::clone.default(%2, memory_format=contiguous_format) : tensor<f32, [2, 16, 15, 15]>
# CHECK-NEXT:  %4 = aten::view.default(%3, [2, -1]) : tensor<f32, [2, 3600]>
# CHECK-NEXT:  return %4

# Eager mode's branch (the result is contiguous) and eager mode's strides.
# CHECK-LABEL: graph @strides(
# CHECK:       %2 = aten::convolution.default(%0, %1, {{.*}}) : tensor<f32, [2, 16, 15, 15], [3600, 1, 240, 16]>
# CHECK-NEXT:  %3 = aten::clone.default(%2, memory_format=contiguous_format) : tensor<f32, [2, 16, 15, 15]>
# CHECK-NEXT:  %4 = aten::add.Tensor(%3, 1) : tensor<f32, [2, 16, 15, 15]>
# CHECK-NEXT:  return (%4, (3600, 225, 15, 1))

# The tokens of a channels-last result are contiguous; layer norm's result
# is contiguous either way.
# CHECK-LABEL: graph @patch_embed(
# CHECK:       %2 = aten::convolution.default(%0, %1, {{.*}}) : tensor<f32, [2, 16, 4, 4], [256, 1, 64, 16]>
# CHECK-NEXT:  %3 = aten::view.default(%2, [2, 16, 16]) : tensor<f32, [2, 16, 16], [256, 1, 16]>
# CHECK-NEXT:  %4 = aten::permute.default(%3, [0, 2, 1]) : tensor<f32, [2, 16, 16]>
# CHECK-NOT:   clone
# CHECK:       return %{{[0-9]+}}

# CHECK-LABEL: graph @unobserved(
# CHECK:       %2 = aten::convolution.default(%0, %1, {{.*}}) : tensor<f32, [2, 16, 4, 4], [256, 1, 64, 16]>
# CHECK-NEXT:  %3 = aten::relu.default(%2) : tensor<f32, [2, 16, 4, 4], [256, 1, 64, 16]>
# CHECK:       %13 = aten::maximum.default(%12, %10) : tensor<f32, [2, 16, 2, 2], [64, 1, 32, 16]>
# CHECK-NEXT:  %14 = aten::clone.default(%13, memory_format=contiguous_format) : tensor<f32, [2, 16, 2, 2]>
# CHECK-NEXT:  return %14

# CORE-LABEL: graph @flat(
# CORE-NEXT:  %G_W
# CORE-NEXT:  %0 = aten::convolution.default(%x, %G_W, {{.*}}) : tensor<f32, [2, 16, 15, 15]>
# CORE-NEXT:  %1 = aten::view.default(%0, [2, -1]) : tensor<f32, [2, 3600]>
# CORE-NEXT:  return %1
