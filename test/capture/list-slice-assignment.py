# Assigning a slice of a list value, as CPython does: a plain slice is
# replaced by the values (their count may differ, PointNet++'s
# `view_shape[1:] = [1] * (len(view_shape) - 1)`); an extended slice takes
# exactly as many values as it selects. The list is capture's own, so the
# graph only sees the sizes and numbers it ends with.
# RUN: %dync export %s:broadcast_shape %s:slices --emit=graph | FileCheck %s
# RUN: not %dync export %s:extended_mismatch --emit=graph 2>&1 | FileCheck %s --check-prefix=MISMATCH
import torch


def broadcast_shape(x, idx):
    view_shape = list(idx.shape)
    view_shape[1:] = [1] * (len(view_shape) - 1)
    repeat_shape = list(idx.shape)
    repeat_shape[0] = 1
    batch = torch.arange(x.shape[0]).view(view_shape).repeat(repeat_shape)
    return x[batch, idx]

# CHECK-LABEL: graph @broadcast_shape(
# CHECK:       aten::view.default(%{{[0-9]+}}, [2, 1, 1])
# CHECK:       aten::index.Tensor(%x, [%{{[0-9]+}}, %idx]) : tensor<f32, [2, 3, 4]>
# CHECK:       return


def slices(x, idx):
    a = [0, 1, 2, 3, 4]
    a[::2] = [x.shape[0], 7, 8]
    a[1:3] = []
    a[len(a):] = (5, 6)
    return x * a[0] + a[-1] + len(a)

# CHECK-LABEL: graph @slices(
# CHECK:       aten::mul.Tensor(%x, 2)
# CHECK-NEXT:  aten::add.Tensor(%{{[0-9]+}}, 6)
# CHECK-NEXT:  aten::add.Tensor(%{{[0-9]+}}, 5)


def extended_mismatch(x, idx):
    a = [0, 1, 2, 3]
    a[::2] = [1, 2, 3]
    return x + a[0]

# MISMATCH: list-slice-assignment.py:[[@LINE-3]]:5: error: ValueError: attempt to assign sequence of size 3 to extended slice of size 2


def example_inputs():
    return (torch.randn(2, 5), torch.randint(0, 5, (2, 3, 4)))
