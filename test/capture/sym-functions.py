# torch's symbolic-number functions (torch.sym_min, sym_max, sym_int, ...),
# which code written for torch.export calls on sizes, run on the sizes as
# torch's shape functions do: on a size read from data (a nonzero count)
# and on a size declared dynamic they give torch's symbolic expression,
# which the graph sizes with; on plain ints they give the int.
# RUN: %dync export %s:budget --emit=graph 2>&1 | FileCheck %s --check-prefix=BUDGET
# RUN: %dync export %s:square --emit=graph --dynamic 'x:0=n[2,64]' --dynamic 'x:1=m[2,64]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=SQUARE
# RUN: %dync export %s:halves --emit=graph 2>&1 | FileCheck %s --check-prefix=HALVES
import torch


def budget(x):
    keep = torch.nonzero(x > 0)
    k = torch.sym_min(keep.shape[0], 4)
    return keep.narrow(0, 0, k) * 2

# BUDGET-LABEL: graph @budget(
# BUDGET-NEXT:      symbols { u0: [0, 9] unbacked }
# BUDGET-NEXT:      relations { min(u0, 4) <= u0 } {
# BUDGET:         %1 = aten::nonzero.default(%0) : tensor<i64, [u0, 2], [1, u0]>
# BUDGET-NEXT:    %2 = aten::slice.Tensor(%1, 0, 0, min(u0, 4)) : tensor<i64, [min(u0, 4), 2], [1, u0]>


def square(x):
    side = torch.sym_max(x.shape[0], x.shape[1])
    return x.new_zeros(side, side)

# SQUARE-LABEL: graph @square(%x: tensor<f32, [n, m]> = L['x'])
# SQUARE-NEXT:      symbols { n: [2, 64], m: [2, 64] } {
# SQUARE-NEXT:    %0 = aten::full.default([max(m, n), max(m, n)], 0,


def halves(x):
    half = torch.sym_int(x.shape[0] / 2)
    return x[:half] + torch.sym_float(half)

# HALVES-LABEL: graph @halves(%x: tensor<f32, [3, 3]> = L['x']) {
# HALVES-NEXT:    %0 = aten::slice.Tensor(%x, 0, 0, 1) : tensor<f32, [1, 3]>
# HALVES-NEXT:    %1 = aten::add.Tensor(%0, 1.0) : tensor<f32, [1, 3]>


def example_inputs():
    return (torch.tensor([[1.0, -2.0, 3.0], [4.0, 0.0, -1.0], [2.0, 2.0, 2.0]]),)
