# An index by integer tensors (`aten::index.Tensor`, tagged
# dynamic_output_shape because an index by a bool mask has as many rows as
# the mask has true elements) takes ATen's direct Meta function, eager's own
# code for the result's sizes and strides, without fake mode's dispatch and
# its Python reimplementation of that code.
# RUN: env DYNC_ORACLE_CACHE=off DYNC_ORACLE_META_KERNELS=off %dync export %s:Gather.forward --emit=graph > %t.off
# RUN: env DYNC_ORACLE_CACHE=off DYNC_ORACLE_PROFILE=%t.profile %dync export %s:Gather.forward --emit=graph 2> %t.err > %t.on
# RUN: FileCheck %s --check-prefix=COUNTS < %t.err
# RUN: FileCheck %s --check-prefixes=CHECK,ON < %t.on
# Where fake mode's reimplementation strides a size-1 dimension otherwise
# than eager's CPU kernel (a transposed `[4, 1, 6]` indexed along its first
# dimension: eager's result is strided `[6, 1, 1]`, fake mode's
# `[6, 6, 1]`), the graph has eager's strides; checking mode runs both
# paths and says so, and the graph is the one this path gives.
# RUN: FileCheck %s --check-prefixes=CHECK,OFF < %t.off
# RUN: env DYNC_ORACLE_CACHE=off DYNC_ORACLE_META_KERNELS=check %dync export %s:Gather.forward --emit=graph 2> %t.check | diff - %t.on
# RUN: FileCheck %s --check-prefix=CHECK-MODE < %t.check
# An index by a bool mask needs the mask's values, which a Meta function
# cannot read: nonzero raises on meta tensors, the call goes through fake
# mode, and the graph holds the unbacked size as with the path off.
# RUN: env DYNC_ORACLE_CACHE=off DYNC_ORACLE_META_KERNELS=off %dync export %s:Masked.forward --example masked_inputs --emit=graph > %t.mask-off
# RUN: env DYNC_ORACLE_CACHE=off DYNC_ORACLE_PROFILE=%t.mask-profile %dync export %s:Masked.forward --example masked_inputs --emit=graph 2> %t.mask-err | diff - %t.mask-off
# RUN: FileCheck %s --check-prefix=MASK-COUNTS < %t.mask-err
# RUN: FileCheck %s --check-prefix=MASK < %t.mask-off
# A uint8 mask, which fake mode refuses, gives the user fake mode's error
# as with the path off; the deprecation warning ATen gives in the Meta
# function's attempt is not the program's and is not shown.
# RUN: env DYNC_ORACLE_CACHE=off DYNC_ORACLE_META_KERNELS=off not %dync export %s:Masked.forward --example byte_mask_inputs --emit=graph 2> %t.byte-off
# RUN: env DYNC_ORACLE_CACHE=off not %dync export %s:Masked.forward --example byte_mask_inputs --emit=graph 2> %t.byte-on
# RUN: diff %t.byte-off %t.byte-on
# RUN: FileCheck %s --check-prefix=BYTE < %t.byte-on
import torch


class Gather(torch.nn.Module):
    def forward(self, table, ids, x, one):
        rows = table[ids]
        picked = x.permute(0, 2, 1)[one]
        return rows * 2, picked


class Masked(torch.nn.Module):
    def forward(self, table, mask):
        return table[mask] + 1


def example_inputs():
    return (torch.randn(10, 3), torch.tensor([[1, 2], [3, 9]]), torch.randn(4, 6, 1), torch.tensor([2]))


def masked_inputs():
    return (torch.randn(4, 3), torch.tensor([True, False, True, True]))


def byte_mask_inputs():
    return (torch.randn(4, 3), torch.tensor([1, 0, 1, 1], dtype=torch.uint8))


# COUNTS: Meta kernels without fake mode's dispatch: 4 calls (1 C++, 3 ATen's Meta functions, 0 as fake mode's Meta branch), {{[0-9.]+}} ms; fake mode: 0 calls, {{[0-9.]+}} ms
# COUNTS-DAG: aten.index.Tensor (ATen's Meta function) 2 calls

# CHECK: %0 = aten::index.Tensor(%table, [%ids]) : tensor<f32, [2, 2, 3]>
# CHECK: %1 = aten::permute.default(%x, [0, 2, 1]) : tensor<f32, [4, 1, 6], [6, 1, 1]>
# ON: %2 = aten::index.Tensor(%1, [%one]) : tensor<f32, [1, 1, 6], [6, 1, 1]>
# OFF: %2 = aten::index.Tensor(%1, [%one]) : tensor<f32, [1, 1, 6]>

# CHECK-MODE: DYNC_ORACLE_META_KERNELS=check: aten.index.Tensor on {{.*}}: fake mode differs from eager's CPU kernel, the ATen's Meta function agrees with it: result 0: ((1, 1, 6), (6, 1, 1), {{.*}}) and ((1, 1, 6), (6, 6, 1), {{.*}})
# CHECK-MODE-NOT: and fake mode's dispatch differ

# MASK-COUNTS: aten.index.Tensor (fake mode) 1 calls
# MASK: symbols { u0: [0, 4] unbacked }
# MASK: aten::index.Tensor(%table, [%mask]) : tensor<f32, [u0, 3]>

# BYTE-NOT: deprecated
# BYTE: aten-meta-index.py:{{[0-9]+}}:{{[0-9]+}}: error: calling operator.getitem (a[b])
