# With the fusion decompositions, a 2-d float32 convolution of NCHW tensors
# runs on channels-last copies of its input and weight; torch then gives
# everything after it channels-last strides, so kernels run along channels
# (kernel-channels-last.dync). An input already channels-last (an earlier
# convolution's, after a ReLU) is used as it is. A graph output is copied
# back to the layout eager mode gives it. Transposed convolutions, other
# dtypes and core ATen alone (-O0) keep the convolution as it is.
# RUN: %dync export %s:block %s:two_convs %s:features %s:transposed %s:double \
# RUN:   --emit=optimized-graph | FileCheck %s
# RUN: %dync export %s:block --emit=optimized-graph -O0 | FileCheck %s --check-prefix=CORE
import torch
import torch.nn.functional as F

W1 = torch.randn(8, 3, 3, 3)
W2 = torch.randn(8, 8, 3, 3)


def block(x):
    return F.max_pool2d(torch.relu(F.conv2d(x, W1, padding=1)), 2)


def two_convs(x):
    return F.conv2d(torch.relu(F.conv2d(x, W1, padding=1)), W2)


def features(x):
    y = F.conv2d(x, W1, padding=1)
    return y.sum(1), y


def transposed(x):
    return F.conv_transpose2d(x, W1.transpose(0, 1))


def double(x):
    return F.conv2d(x.double(), W1.double())


def example_inputs():
    return (torch.randn(2, 3, 8, 8),)

# ReLU follows the convolution's channels-last layout; the pool reads
# channels-last slices and writes a channels-last result.
# CHECK:      kernel @k0(%in0: tensor<f32, [2, 8, 8, 8], [512, 1, 64, 8]>) {
# CHECK-NEXT:   %0 = aten::relu.default(%in0) : tensor<f32, [2, 8, 8, 8], [512, 1, 64, 8]>
# CHECK:      kernel @k1(%in0: tensor<f32, [2, 8, 8, 8], [512, 1, 64, 8]>) {
# CHECK-NEXT:   %v0 = aten::slice.Tensor(%in0, 2, 0, 7, 2) : tensor<f32, [2, 8, 4, 8], [512, 1, 128, 8]>
# CHECK-NEXT:   %v1 = aten::slice.Tensor(%v0, 3, 0, 7, 2) : tensor<f32, [2, 8, 4, 4], [512, 1, 128, 16]>
# CHECK:        %2 = aten::maximum.default(%1, %v5) : tensor<f32, [2, 8, 4, 4], [128, 1, 32, 8]>

# CHECK-LABEL: graph @block(
# CHECK:       %0 = aten::clone.default(%x, memory_format=channels_last) : tensor<f32, [2, 3, 8, 8], [192, 1, 24, 3]>
# CHECK-NEXT:  %1 = aten::clone.default(%G_W1, memory_format=channels_last) : tensor<f32, [8, 3, 3, 3], [27, 1, 9, 3]>
# CHECK-NEXT:  %2 = aten::convolution.default(%0, %1, none, [1, 1], [1, 1], [1, 1], false, [0, 0], 1) : tensor<f32, [2, 8, 8, 8], [512, 1, 64, 8]>
# CHECK-NEXT:  %3 = @k0(%2) : tensor<f32, [2, 8, 8, 8], [512, 1, 64, 8]>
# CHECK-NEXT:  %[[POOLED:[0-9]+]] = @k1(%3) : tensor<f32, [2, 8, 4, 4], [128, 1, 32, 8]>
# CHECK-NEXT:  %[[OUT:[0-9]+]] = aten::clone.default(%[[POOLED]], memory_format=contiguous_format) : tensor<f32, [2, 8, 4, 4]>
# CHECK-NEXT:  return %[[OUT]]

# CHECK-LABEL: graph @two_convs(
# CHECK:       %3 = @k2(%2) : tensor<f32, [2, 8, 8, 8], [512, 1, 64, 8]>
# CHECK-NEXT:  %4 = aten::clone.default(%G_W2, memory_format=channels_last)
# CHECK-NEXT:  %5 = aten::convolution.default(%3, %4, {{.*}}) : tensor<f32, [2, 8, 6, 6], [288, 1, 48, 8]>
# CHECK-NEXT:  %6 = aten::clone.default(%5, memory_format=contiguous_format) : tensor<f32, [2, 8, 6, 6]>
# CHECK-NEXT:  return %6

# A result eager mode lays out as it is (a reduction over channels) is not
# copied.
# CHECK-LABEL: graph @features(
# CHECK:       %2 = aten::convolution.default(%0, %1, {{.*}}) : tensor<f32, [2, 8, 8, 8], [512, 1, 64, 8]>
# CHECK-NEXT:  %3 = aten::sum.dim_IntList(%2, [1]) : tensor<f32, [2, 8, 8]>
# CHECK-NEXT:  %4 = aten::clone.default(%2, memory_format=contiguous_format) : tensor<f32, [2, 8, 8, 8]>
# CHECK-NEXT:  return (%3, %4)

# CHECK-LABEL: graph @transposed(
# CHECK-NOT:   clone
# CHECK:       aten::convolution.default(%x, %0, {{.*}}, true, [0, 0], 1) : tensor<f32, [2, 8, 10, 10]>
# CHECK-NEXT:  return

# CHECK-LABEL: graph @double(
# CHECK-NOT:   clone
# CHECK:       aten::convolution.default(%0, %1, {{.*}}) : tensor<f64, [2, 8, 6, 6]>
# CHECK-NEXT:  return

# CORE-NOT:    clone
# CORE:        aten::convolution.default(%x, %G_W1, none, [1, 1], [1, 1], [1, 1], false, [0, 0], 1) : tensor<f32, [2, 8, 8, 8]>
