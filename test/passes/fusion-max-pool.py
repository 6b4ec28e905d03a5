# Max pooling is a kernel: with the fusion decompositions, the values of
# max_pool2d_with_indices are the elementwise maximum of the window's strided
# slices of the input (offset o: start o * dilation, step stride), which
# fusion puts into one kernel reading each slice through its strides. The
# decomposition also calls the operator itself, for the indices: the call is
# recorded as it is, and dead-code elimination removes it when nothing reads
# them. Padding, ceil-mode windows past the input and -O0 keep the operator.
# RUN: %dync export %s:values %s:values_and_indices %s:dilated %s:padded \
# RUN:   %s:ceil_extra --emit=graph | FileCheck %s --check-prefix=CAPTURED
# RUN: %dync export %s:values %s:values_and_indices %s:dilated %s:padded \
# RUN:   %s:ceil_extra --emit=optimized-graph | FileCheck %s
# RUN: %dync export %s:values --emit=optimized-graph -O0 | FileCheck %s --check-prefix=CORE
import torch
import torch.nn.functional as F


def values(x):
    return F.max_pool2d(x, 2)


def values_and_indices(x):
    return F.max_pool2d(x, 2, return_indices=True)


def dilated(x):
    return F.max_pool2d(x, 3, stride=2, dilation=2)


def padded(x):
    return F.max_pool2d(x, 3, stride=2, padding=1)


def ceil_extra(x):
    return F.max_pool2d(x, 3, stride=2, ceil_mode=True)


def example_inputs():
    return (torch.randn(2, 4, 16, 16),)

# The captured graph holds the operator's call beside the maximum of the
# four slices; nothing reads its results yet.
# CAPTURED-LABEL: graph @values(
# CAPTURED:       %0 = aten::max_pool2d_with_indices.default(%x, [2, 2])
# CAPTURED:       %1 = aten::slice.Tensor(%x, 2, 0, 15, 2) : tensor<f32, [2, 4, 8, 16], [1024, 256, 32, 1]>
# CAPTURED-NEXT:  %2 = aten::slice.Tensor(%x, 2, 1, 16, 2)
# CAPTURED-NEXT:  %3 = aten::slice.Tensor(%1, 3, 0, 15, 2) : tensor<f32, [2, 4, 8, 8], [1024, 256, 32, 2]>
# CAPTURED-NEXT:  %4 = aten::slice.Tensor(%1, 3, 1, 16, 2)
# CAPTURED-NEXT:  %5 = aten::slice.Tensor(%2, 3, 0, 15, 2)
# CAPTURED-NEXT:  %6 = aten::slice.Tensor(%2, 3, 1, 16, 2)
# CAPTURED-NEXT:  %7 = aten::maximum.default(%3, %4)
# CAPTURED-NEXT:  %8 = aten::maximum.default(%7, %5)
# CAPTURED-NEXT:  %9 = aten::maximum.default(%8, %6)
# CAPTURED-NEXT:  return %9
# CAPTURED-LABEL: graph @padded(
# CAPTURED-NEXT:  %0 = aten::max_pool2d_with_indices.default(%x, [3, 3], [2, 2], [1, 1])
# CAPTURED-NEXT:  return %0#0
# CAPTURED-LABEL: graph @ceil_extra(
# CAPTURED-NEXT:  %0 = aten::max_pool2d_with_indices.default(%x, [3, 3], [2, 2], [0, 0], [1, 1], true)
# CAPTURED-NEXT:  return %0#0

# One kernel per pool (each entry has its own; equal kernel text is
# compiled once). It takes the input whole and reads each slice through it:
# the slices are views in the kernel, at the offset each starts at, with the
# strides its type gives.
# CHECK:      kernel @k0(%in0: tensor<f32, [2, 4, 16, 16]>) {
# CHECK-NEXT:   %v0 = aten::slice.Tensor(%in0, 2, 0, 15, 2) : tensor<f32, [2, 4, 8, 16], [1024, 256, 32, 1]>
# CHECK-NEXT:   %v1 = aten::slice.Tensor(%v0, 3, 0, 15, 2) : tensor<f32, [2, 4, 8, 8], [1024, 256, 32, 2]>
# CHECK-NEXT:   %v2 = aten::slice.Tensor(%v0, 3, 1, 16, 2) : tensor<f32, [2, 4, 8, 8], [1024, 256, 32, 2]>
# CHECK-NEXT:   %v3 = aten::slice.Tensor(%in0, 2, 1, 16, 2) : tensor<f32, [2, 4, 8, 16], [1024, 256, 32, 1]>
# CHECK-NEXT:   %v4 = aten::slice.Tensor(%v3, 3, 0, 15, 2) : tensor<f32, [2, 4, 8, 8], [1024, 256, 32, 2]>
# CHECK-NEXT:   %v5 = aten::slice.Tensor(%v3, 3, 1, 16, 2) : tensor<f32, [2, 4, 8, 8], [1024, 256, 32, 2]>
# CHECK-NEXT:   %0 = aten::maximum.default(%v1, %v2) : tensor<f32, [2, 4, 8, 8]>
# CHECK-NEXT:   %1 = aten::maximum.default(%0, %v4) : tensor<f32, [2, 4, 8, 8]>
# CHECK-NEXT:   %2 = aten::maximum.default(%1, %v5) : tensor<f32, [2, 4, 8, 8]>
# CHECK-NEXT:   return %2

# Dilation 2, stride 2: nine slices starting at 0, 2 and 4 in each dimension.
# CHECK-LABEL: kernel @k2(%in0: tensor<f32, [2, 4, 16, 16]>) {
# CHECK-NEXT:   %v0 = aten::slice.Tensor(%in0, 2, 0, 12, 2) : tensor<f32, [2, 4, 6, 16], [1024, 256, 32, 1]>
# CHECK-NEXT:   %v1 = aten::slice.Tensor(%v0, 3, 0, 12, 2)
# CHECK-NEXT:   %v2 = aten::slice.Tensor(%v0, 3, 2, 14, 2)
# CHECK-NEXT:   %v3 = aten::slice.Tensor(%v0, 3, 4, 16, 2)
# CHECK-NEXT:   %v4 = aten::slice.Tensor(%in0, 2, 2, 14, 2)
# CHECK:        %v8 = aten::slice.Tensor(%in0, 2, 4, 16, 2)
# CHECK:        %v11 = aten::slice.Tensor(%v8, 3, 4, 16, 2)
# CHECK-NEXT:   %0 = aten::maximum.default(%v1, %v2) : tensor<f32, [2, 4, 6, 6]>
# CHECK:        %7 = aten::maximum.default(%6, %v11) : tensor<f32, [2, 4, 6, 6]>
# CHECK-NEXT:   return %7

# Unread indices: the operator is gone, and so are the slices.
# CHECK-LABEL: graph @values(
# CHECK-NEXT:  %9 = @k0(%x) : tensor<f32, [2, 4, 8, 8]>
# CHECK-NEXT:  return %9

# Read indices: the operator stays for them, the values are the kernel's.
# CHECK-LABEL: graph @values_and_indices(
# CHECK-NEXT:  %0 = aten::max_pool2d_with_indices.default(%x, [2, 2])
# CHECK-NEXT:  %9 = @k{{[0-9]+}}(%x) : tensor<f32, [2, 4, 8, 8]>
# CHECK-NEXT:  return (%9, %0#1)

# CHECK-LABEL: graph @dilated(
# CHECK-NEXT:  %20 = @k2(%x) : tensor<f32, [2, 4, 6, 6]>
# CHECK-NEXT:  return %20

# CHECK-LABEL: graph @padded(
# CHECK-NEXT:  %0 = aten::max_pool2d_with_indices.default(%x, [3, 3], [2, 2], [1, 1])
# CHECK-NEXT:  return %0#0
# CHECK-LABEL: graph @ceil_extra(
# CHECK-NEXT:  %0 = aten::max_pool2d_with_indices.default(%x, [3, 3], [2, 2], [0, 0], [1, 1], true)
# CHECK-NEXT:  return %0#0

# CORE-NOT:    kernel
# CORE:        %0 = aten::max_pool2d_with_indices.default(%x, [2, 2])
# CORE-NEXT:   return %0#0
