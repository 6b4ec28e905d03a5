# Data-dependent sizes and values: nonzero, boolean-mask indexing,
# masked_select, unique and item()/tolist() of an integer tensor each give a
# fresh unbacked symbol, declared `unbacked`, that later operators size
# with. torch._check and torch._check_is_size narrow its range or add
# relations, which the graph checks when it runs; guards never mention it.
# A data-dependent result of a non-contiguous input (combinations'
# masked_select of expanded grids) keeps the layout torch's meta function
# gives: no kernel is probed for a size that has no value yet.
# RUN: %dync export %s:positions %s:masked %s:distinct %s:pairs --emit=graph | FileCheck %s
# RUN: %dync export %s:counted %s:matched %s:listed --example counted=int_inputs --example matched=int_inputs --example listed=list_inputs --emit=graph 2>&1 | FileCheck %s --check-prefix=ITEM
# RUN: %dync export %s:counted --example int_inputs --emit=guards 2>&1 | FileCheck %s --check-prefix=GUARDS
# RUN: %dync export %s:rows %s:columns %s:runs %s:many --example rows=rows_inputs --example columns=rows_inputs --example runs=rows_inputs --example many=many_inputs --emit=graph 2>&1 | FileCheck %s --check-prefix=MORE
import torch


def positions(x):
    return torch.nonzero(x) + 1

# CHECK-LABEL: graph @positions(%x: tensor<f32, [3, 2]> = L['x'])
# CHECK-NEXT:      symbols { u0: [0, 6] unbacked } {
# CHECK-NEXT:    %0 = aten::nonzero.default(%x) : tensor<i64, [u0, 2], [1, u0]>
# CHECK-NEXT:    %1 = aten::add.Tensor(%0, 1) : tensor<i64, [u0, 2], [1, max(u0, 1)]>


def masked(x):
    picked = x[x > 0]
    return picked.sum(), torch.masked_select(x, x < 0)

# CHECK-LABEL: graph @masked(
# CHECK-NEXT:      symbols { u0: [0, 6] unbacked, u1: [0, 6] unbacked } {
# CHECK:         aten::index.Tensor(%x, [%0]) : tensor<f32, [u0]>
# CHECK-NEXT:    aten::sum.dim_IntList(%1, []) : tensor<f32, []>
# CHECK:         aten::masked_select.default(%x, %3) : tensor<f32, [u1]>


def distinct(x):
    return torch.unique(x)

# CHECK-LABEL: graph @distinct(
# CHECK-NEXT:      symbols { u0: [0, 6] unbacked } {
# CHECK-NEXT:    %0 = aten::_unique2.default(%x) : tuple<tensor<f32, [u0]>,


def counted(x, n):
    k = n.item()
    torch._check_is_size(k)
    torch._check(k <= 8)
    torch._check(k != 3)
    return torch.arange(k) * 2, x + k

# ITEM-LABEL: graph @counted(
# ITEM:           symbols { u0: [0, 8] unbacked }
# ITEM-NEXT:      relations { u0 != 3 } {
# ITEM-NEXT:    %0 = aten::_local_scalar_dense.default(%n) : int<u0> loc({{.*}}:[[@LINE-9]]:9)
# ITEM-NEXT:    %1 = aten::arange.start_step(0, u0, {{.*}}) : tensor<i64, [u0]>
# ITEM:         aten::add.Tensor(%x, u0) : tensor<f32, [3]>


def matched(x, n):
    k = n.item()
    torch._check(k == x.size(0))
    return torch.arange(k) + x

# The node that computes u0 keeps it; what torch replaced it by is checked.
# ITEM-LABEL: graph @matched(
# ITEM:           symbols { u0: [3, 3] unbacked }
# ITEM-NEXT:      relations { u0 == 3 } {
# ITEM-NEXT:    %0 = aten::_local_scalar_dense.default(%n) : int<u0>
# ITEM-NEXT:    aten::arange.start_step(0, 3, {{.*}}) : tensor<i64, [3]>


def listed(x, n):
    a, b = n.tolist()
    torch._check_is_size(a)
    torch._check_is_size(b)
    return x.new_zeros(a, b)

# ITEM-LABEL: graph @listed(
# ITEM:           symbols { u0: [0, inf] unbacked, u1: [0, inf] unbacked } {
# ITEM-NEXT:    %0 = aten::select.int(%n, 0, 0) : tensor<i64, []>
# ITEM-NEXT:    %1 = aten::_local_scalar_dense.default(%0) : int<u0>
# ITEM-NEXT:    %2 = aten::select.int(%n, 0, 1) : tensor<i64, []>
# ITEM-NEXT:    %3 = aten::_local_scalar_dense.default(%2) : int<u1>
# ITEM-NEXT:    aten::full.default([u0, u1], 0, {{.*}}) : tensor<f32, [u0, u1], [max(u1, 1), 1]>

# GUARDS-LABEL: guards @counted(
# GUARDS-NOT:   u0
# GUARDS:       }


def pairs(x):
    return torch.combinations(x.flatten(), r=2)

# CHECK-LABEL: graph @pairs(
# CHECK:         aten::masked_select.default({{.*}}) : tensor<f32, [u{{[0-9]+}}]>
# CHECK:         aten::cat.default({{.*}}) : tensor<f32, [u{{[0-9]+}}, 2]>


# torch.unique over a dimension reaches torch._VF.unique_dim, a torch
# function read through torch._VF rather than torch.
def rows(x):
    return torch.unique(x, dim=0, return_inverse=True)

# MORE-LABEL: graph @rows(
# MORE-NEXT:      symbols { u0: [0, 3] unbacked } {
# MORE-NEXT:    %0 = aten::unique_dim.default(%x, 0, true, true) : tuple<tensor<i64, [u0, 2]>, tensor<i64, [3]>, tensor<i64, [u0]>>


# unique_consecutive over a dimension counted from the end is the same
# call over that dimension counted from the front: torch's fake
# implementation takes a negative one as it comes and gives the result a
# rank too many. A 1-D input is the kernel's own case: dim=0 is the call
# without a dimension, dim=-1 that call asking for inverse and counts.
def columns(x):
    return torch.unique_consecutive(x, return_counts=True, dim=-1)


def runs(x):
    return torch.unique_consecutive(x[0], dim=0), torch.unique_consecutive(x[0], dim=-1)

# MORE-LABEL: graph @columns(
# MORE-NEXT:      symbols { u0: [0, 2] unbacked } {
# MORE-NEXT:    %0 = aten::unique_consecutive.default(%x, false, true, 1) : tuple<tensor<i64, [3, u0], [max(u0, 1), 1]>, tensor<i64, [2]>, tensor<i64, [u0]>>

# MORE-LABEL: graph @runs(
# MORE:         aten::unique_consecutive.default(%{{[0-9]+}}) : tuple<tensor<i64, [u0]>, tensor<i64, [0]>, tensor<i64, [0]>>
# MORE:         aten::unique_consecutive.default(%{{[0-9]+}}, true, true) : tuple<tensor<i64, [u1]>, tensor<i64, [2]>, tensor<i64, [u1]>>


# Ten data-dependent sizes: torch names them u0 to u9, and u8 is the IR's
# dtype uint8, so that symbol is u8_.
def many(x):
    return [torch.nonzero(x > i) for i in range(10)]

# MORE-LABEL: graph @many(
# MORE-NEXT:      symbols { u0: [0, 12] unbacked, {{.*}} u7: [0, 12] unbacked, u8_: [0, 12] unbacked, u9: [0, 12] unbacked } {
# MORE:         aten::nonzero.default(%{{[0-9]+}}) : tensor<i64, [u8_, 1], [1, u8_]>


def example_inputs():
    return (torch.tensor([[0.0, 1.5], [2.0, -1.0], [0.0, 3.0]]),)


def rows_inputs():
    return (torch.tensor([[1, 2], [1, 2], [3, 4]]),)


def many_inputs():
    return (torch.arange(12),)


def int_inputs():
    return (torch.randn(3), torch.tensor(4))


def list_inputs():
    return (torch.randn(3), torch.tensor([2, 3]))
