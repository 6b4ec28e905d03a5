# relu6 (hardtanh) is clamp, a kernel's element op; constant_pad_nd with
# zero or negative pads is eager's narrow-and-clone, which the fusion
# decompositions record as slices and a clone, so neither ends a kernel:
# batch norm, relu6 and the copy a zero pad makes are one kernel writing
# what the convolution reads (MobileNetV2's "same" padding by hand). A
# positive pad reads outside the input and stays the operator; so does
# hardtanh of an integer tensor, whose bounds eager truncates first.
# RUN: %dync export %s:relu6_pad %s:cropped %s:padded %s:int_hardtanh %s:default_bounds \
# RUN:   --emit=optimized-graph | FileCheck %s
# RUN: %dync export %s:relu6_pad --emit=optimized-graph -O0 | FileCheck %s --check-prefix=CORE
import torch
import torch.nn.functional as F


def relu6_pad(x, w):
    y = F.relu6(x * 2.0 + 1.0)
    return F.conv2d(F.pad(y, [0, 0, 0, 0]), w)


def cropped(x, w):
    return F.hardtanh(F.pad(x, [-1, 0, 0, -2]), -0.5, 0.5) + 1.0


def padded(x, w):
    return F.pad(F.relu6(x), [1, 1, 1, 1])


def int_hardtanh(x, w):
    return F.hardtanh(x.to(torch.int64), -2, 3)


def default_bounds(x, w):
    return F.hardtanh(x) * 3.0


def example_inputs():
    return (torch.randn(2, 4, 8, 8), torch.randn(4, 4, 1, 1))

# CHECK-LABEL: kernel @k0(
# CHECK:       aten::add.Tensor
# CHECK-NEXT:  %2 = aten::hardtanh.default(%1, 0, 6)
# CHECK-NEXT:  return %2
# CHECK-LABEL: kernel @k1(
# CHECK-NEXT:  %v0 = aten::slice.Tensor(%in0, 3, 1, 8)
# CHECK-NEXT:  %v1 = aten::slice.Tensor(%v0, 2, 0, 6)
# CHECK-NEXT:  %0 = aten::clone.default(%v1) : tensor<f32, [2, 4, 6, 7]>
# CHECK-NEXT:  %1 = aten::hardtanh.default(%0, -0.5, 0.5)
# CHECK-LABEL: graph @relu6_pad(
# CHECK:       %2 = @k0(%x)
# CHECK-NEXT:  aten::convolution.default(%2, %w,
# CHECK-NEXT:  return
# CHECK-LABEL: graph @cropped(
# CHECK:       %4 = @k1(%x) : tensor<f32, [2, 4, 6, 7]>
# CHECK-NEXT:  return %4
# CHECK-LABEL: graph @padded(
# CHECK:       %0 = @k2(%x)
# CHECK-NEXT:  aten::constant_pad_nd.default(%0, [1, 1, 1, 1], 0.0)
# CHECK-LABEL: graph @int_hardtanh(
# CHECK:       aten::hardtanh.default(%0, -2, 3) : tensor<i64, [2, 4, 8, 8]>
# CHECK-LABEL: graph @default_bounds(
# CHECK:       %1 = @k4(%x)
# CHECK-NEXT:  return %1

# CORE-LABEL: graph @relu6_pad(
# CORE:       aten::hardtanh.default
# CORE:       aten::constant_pad_nd.default(%{{.*}}, [0, 0, 0, 0], 0.0)
