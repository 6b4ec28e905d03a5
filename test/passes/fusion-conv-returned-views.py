# Views of several convolutions' channels-last results, returned: eager
# mode's results are views of NCHW tensors, which copies would not be, so
# each observes its convolution's layout choice. Returning is the end of the
# function, so capture reads every result before it stops the attempt, and
# the second attempt converts all three convolutions back: two sessions,
# where stopping at the first observed result would take one attempt per
# convolution and one more (four). The graph is the one the attempts one by
# one gave: each convolution's result is converted back right after it.
# RUN: env DYNC_ORACLE_PROFILE=%t.profile %dync export %s:views --emit=graph | FileCheck %s
# RUN: FileCheck %s --check-prefix=PROFILE < %t.profile
# RUN: %dync export %s:views %s:shared --emit=graph | FileCheck %s --check-prefix=SHARED
import torch
import torch.nn.functional as F

W = torch.randn(16, 3, 4, 4)


def views(x):
    a = F.conv2d(x, W, padding=1)
    b = F.conv2d(x * 2, W, padding=1)
    c = F.conv2d(x + 1, W, padding=1)
    return a.transpose(1, 2), b[:, :8], c.permute(0, 2, 3, 1)


def shared(x):
    # The second result shares the first's storage in eager mode.
    a = F.conv2d(x, W, padding=1)
    b = F.conv2d(x * 2, W, padding=1)
    return a, a[:, :4], b.transpose(2, 3)


def example_inputs():
    return (torch.randn(2, 3, 16, 16),)

# PROFILE: Session.__init__ 2 calls

# CHECK-LABEL: graph @views(
# CHECK:       %[[A:[0-9]+]] = aten::convolution.default({{.*}}) : tensor<f32, [2, 16, 15, 15], [3600, 1, 240, 16]>
# CHECK-NEXT:  %[[A2:[0-9]+]] = aten::clone.default(%[[A]], memory_format=contiguous_format) : tensor<f32, [2, 16, 15, 15]>
# CHECK:       %[[B:[0-9]+]] = aten::convolution.default({{.*}}) : tensor<f32, [2, 16, 15, 15], [3600, 1, 240, 16]>
# CHECK-NEXT:  %[[B2:[0-9]+]] = aten::clone.default(%[[B]], memory_format=contiguous_format) : tensor<f32, [2, 16, 15, 15]>
# CHECK:       %[[C:[0-9]+]] = aten::convolution.default({{.*}}) : tensor<f32, [2, 16, 15, 15], [3600, 1, 240, 16]>
# CHECK-NEXT:  %[[C2:[0-9]+]] = aten::clone.default(%[[C]], memory_format=contiguous_format) : tensor<f32, [2, 16, 15, 15]>
# CHECK:       aten::permute.default(%[[A2]], [0, 2, 1, 3])
# CHECK:       aten::slice.Tensor(%[[B2]], 1, 0, 8)
# CHECK:       aten::permute.default(%[[C2]], [0, 2, 3, 1])
# CHECK-NOT:   clone
# CHECK:       return

# SHARED-LABEL: graph @shared(
# SHARED:       %[[A:[0-9]+]] = aten::convolution.default({{.*}}) : tensor<f32, [2, 16, 15, 15], [3600, 1, 240, 16]>
# SHARED-NEXT:  %[[A2:[0-9]+]] = aten::clone.default(%[[A]], memory_format=contiguous_format) : tensor<f32, [2, 16, 15, 15]>
# SHARED:       %[[B:[0-9]+]] = aten::convolution.default({{.*}}) : tensor<f32, [2, 16, 15, 15], [3600, 1, 240, 16]>
# SHARED-NEXT:  %[[B2:[0-9]+]] = aten::clone.default(%[[B]], memory_format=contiguous_format) : tensor<f32, [2, 16, 15, 15]>
# SHARED:       return
