# A tensor constant of a few elements made in the function (the index list
# of `x[..., [-2], :]`, `torch.tensor([[0.5, 1.0]])`) is built in the graph
# from its numbers: one scalar_tensor each, stacked, viewed to its shape. A
# larger one stops capture saying how large a constant may be.
# RUN: %dync export %s:index_list %s:table --emit=graph | FileCheck %s
# RUN: not %dync export %s:too_large --emit=graph 2>&1 | FileCheck %s --check-prefix=LARGE
import torch


def index_list(x):
    return x[..., [-2], :]

# CHECK-LABEL: graph @index_list(
# CHECK:       %[[E:[0-9]+]] = aten::scalar_tensor.default(-2, dtype=i64
# CHECK-NEXT:  %[[I:[0-9]+]] = aten::view.default(%[[E]], [1])
# CHECK:       aten::index.Tensor(%x, [none, %[[I]]])


def table(x):
    return x * torch.tensor([[0.5, 2.0]])

# CHECK-LABEL: graph @table(
# CHECK:       %[[A:[0-9]+]] = aten::scalar_tensor.default(0.5, dtype=f32
# CHECK-NEXT:  %[[B:[0-9]+]] = aten::scalar_tensor.default(2.0, dtype=f32
# CHECK-NEXT:  %[[S:[0-9]+]] = aten::stack.default([%[[A]], %[[B]]], 0)
# CHECK-NEXT:  %[[T:[0-9]+]] = aten::view.default(%[[S]], [1, 2])
# CHECK-NEXT:  aten::mul.Tensor(%x, %[[T]])


def too_large(x):
    return x + torch.tensor(list(range(100)))

# LARGE: small-tensor-constants.py:[[@LINE-2]]:{{[0-9]+}}: error: a tensor constant of shape (100,) and dtype torch.int64 was created; graphs can only hold constants of at most 64 elements, laid out contiguously: pass a larger one as an argument or keep it as a module's buffer


def example_inputs():
    return (torch.randn(3, 4, 2),)
