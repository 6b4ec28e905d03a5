# A one-element tensor made from plain numbers has a value known from the
# program alone: fake tensors carry it, so torch's own checks on it are
# decided (torch.cov compares its degrees of freedom, a scalar_tensor, with
# 0) and item() of it is a constant, where item() of a tensor computed from
# the inputs is a float value of the graph. The tensors stay graph values; a
# comparison of constants leaves no node.
# A tensor of a few elements made from static sizes and literals keeps its
# values too (Deformable-DETR's level sizes): an int read from it is that
# number, here linspace's 5 steps, not a data-dependent value.
# RUN: %dync export %s:cov %s:item %s:data_dependent %s:level_sizes --emit=graph | FileCheck %s
import torch


def cov(x):
    return torch.cov(x)

# CHECK-LABEL: graph @cov(
# CHECK:       aten::scalar_tensor.default(3, dtype=i64
# CHECK-NEXT:  aten::le.Scalar(
# CHECK-NOT:   aten::equal
# CHECK:       aten::mm.default
# CHECK:       return


def item(x):
    return x * torch.tensor(3.0).item()

# CHECK-LABEL: graph @item(
# CHECK:       aten::mul.Tensor(%x, 3.0)


def data_dependent(x):
    return x * x.sum().item()

# CHECK-LABEL: graph @data_dependent(
# CHECK:       %[[SUM:[0-9]+]] = aten::sum.{{[a-zA-Z_]+}}(%x
# CHECK-NEXT:  %[[S:[0-9]+]] = aten::_local_scalar_dense.default(%[[SUM]]) : float
# CHECK-NEXT:  aten::mul.Tensor(%x, %[[S]])


def level_sizes(x):
    shapes = torch.as_tensor([tuple(x.shape), (2, 5)])
    h, w = shapes[1]
    return torch.linspace(0.5, w - 0.5, w) * x.sum(), shapes.prod(1)

# CHECK-LABEL: graph @level_sizes(
# CHECK:       aten::stack.default(
# CHECK-NOT:   aten::_local_scalar_dense
# CHECK:       aten::arange.start_step(0, 5,
# CHECK-NOT:   aten::_local_scalar_dense
# CHECK:       aten::prod.dim_int(
# CHECK:       return


def example_inputs():
    return (torch.randn(3, 4),)
