# A one-element tensor made from plain numbers has a value known from the
# program alone: fake tensors carry it, so torch's own checks on it are
# decided (torch.cov compares its degrees of freedom, a scalar_tensor, with
# 0) and item() of it is a constant. The tensors stay graph values; a
# comparison of constants leaves no node.
# RUN: %dync export %s:cov %s:item --emit=graph | FileCheck %s
# RUN: not %dync export %s:data_dependent --emit=graph 2>&1 | FileCheck %s --check-prefix=DATA
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

# DATA: constant-tensors.py:[[@LINE-2]]:16: error: TensorBase.item gives a float computed from tensor data; graphs have symbolic ints for such values, but no symbolic floats yet, so it cannot be captured


def example_inputs():
    return (torch.randn(3, 4),)
