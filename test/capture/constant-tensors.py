# A one-element tensor made from plain numbers has a value known from the
# program alone: fake tensors carry it, so torch's own checks on it are
# decided (torch.cov compares its degrees of freedom, a scalar_tensor, with
# 0) and item() of it is a constant, where item() of a tensor computed from
# the inputs is a float value of the graph. The tensors stay graph values; a
# comparison of constants leaves no node.
# RUN: %dync export %s:cov %s:item %s:data_dependent --emit=graph | FileCheck %s
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


def example_inputs():
    return (torch.randn(3, 4),)
