# torch.tensor and torch.as_tensor of a nested list holding integers read
# from tensor data (tolist(), item()) and the program's integer arithmetic on
# them: each number a 0-d scalar_tensor of the dtype eager infers (or the one
# given), stacked level by level, so the graph computes the values eager
# copies in. A bool the program computed by comparing such integers
# (ColBERT's `x != pad`), and `& | ^ not` of such bools, are sym:: nodes
# computing them from the ints; so is a float computed from such integers by
# Python float arithmetic (`v * 0.5`). Python's `and` decides a bool's truth:
# refused at the user's line as a data-dependent branch.
# RUN: %dync export %s:shifted %s:nested %s:given %s:compared %s:halved %s:bools --example shifted=ids_inputs --example nested=ids_inputs --example compared=ids_inputs --example halved=ids_inputs --example bools=ids_inputs --emit=graph | FileCheck %s
# RUN: not %dync export --data-branches=refuse %s:anded --example ids_inputs --emit=graph 2>&1 | FileCheck %s --check-prefix=REFUSED
import torch


def shifted(ids):
    return torch.tensor([v + 1 for v in ids.tolist()])

# CHECK-LABEL: graph @shifted(
# CHECK:         %1 = aten::_local_scalar_dense.default(%0) : int<u0>
# CHECK:         aten::scalar_tensor.default(u0 + 1, dtype=i64, {{.*}}) : tensor<i64, []>
# CHECK:         aten::scalar_tensor.default(u2 + 1, dtype=i64, {{.*}}) : tensor<i64, []>
# CHECK:         aten::cat.default({{.*}}) : tensor<i64, [3]>


def nested(ids):
    a, b, c = ids.tolist()
    return torch.as_tensor([[a, 2], (b, a * c)]) * 3

# CHECK-LABEL: graph @nested(
# CHECK:         aten::scalar_tensor.default(u0, dtype=i64, {{.*}})
# CHECK:         aten::scalar_tensor.default(2, dtype=i64, {{.*}})
# CHECK:         aten::scalar_tensor.default(u0*u2, dtype=i64, {{.*}})
# CHECK:         aten::mul.Tensor({{.*}}, 3) : tensor<i64, [2, 2]>


def given(ids, x):
    a, b, c = ids.tolist()
    return x * torch.tensor([a, b, c], dtype=torch.float32)

# CHECK-LABEL: graph @given(
# CHECK:         aten::scalar_tensor.default(u1, dtype=f32, {{.*}}) : tensor<f32, []>
# CHECK:         aten::mul.Tensor(%x, {{.*}}) : tensor<f32, [3]>


def compared(ids):
    return torch.tensor([(v not in []) and v != 0 for v in ids.tolist()] + [ids.tolist()[0] < 6])

# CHECK-LABEL: graph @compared(
# CHECK:         %1 = aten::_local_scalar_dense.default(%0) : int<u0>
# CHECK:         %[[NE:[0-9]+]] = sym::ne.default(u0, 0) : bool
# CHECK-NEXT:    aten::scalar_tensor.default(%[[NE]], dtype=bool, {{.*}}) : tensor<bool, []>
# CHECK:         %[[LT:[0-9]+]] = sym::lt.default(u3, 6) : bool
# CHECK-NEXT:    aten::scalar_tensor.default(%[[LT]], dtype=bool, {{.*}}) : tensor<bool, []>
# CHECK:         aten::cat.default({{.*}}) : tensor<bool, [4]>


def halved(ids):
    return torch.tensor([v * 0.5 for v in ids.tolist()] + [ids.sum().item() / 2])

# CHECK-LABEL: graph @halved(
# CHECK:         %[[H:[0-9]+]] = sym::mul.default(u0, 0.5) : float
# CHECK:         %[[Q:[0-9]+]] = sym::truediv.default(u3, 2) : float
# CHECK:         aten::scalar_tensor.default(%[[H]], dtype=f32, {{.*}}) : tensor<f32, []>
# CHECK:         aten::scalar_tensor.default(%[[Q]], dtype=f32, {{.*}}) : tensor<f32, []>
# CHECK:         aten::cat.default({{.*}}) : tensor<f32, [4]>


def bools(ids):
    a, b, c = ids.tolist()
    m = a > 0
    return torch.tensor([m & (b < 3), (a != 0) | (c == 7), (a > b) ^ (c > 0), not m, b < 0.5])

# CHECK-LABEL: graph @bools(
# CHECK:         %[[M:[0-9]+]] = sym::gt.default(u0, 0) : bool
# CHECK-NEXT:    %[[B:[0-9]+]] = sym::lt.default(u1, 3) : bool
# CHECK-NEXT:    %[[AND:[0-9]+]] = sym::and.default(%[[M]], %[[B]]) : bool
# CHECK:         sym::or.default(%{{[0-9]+}}, %{{[0-9]+}}) : bool
# CHECK:         sym::xor.default(%{{[0-9]+}}, %{{[0-9]+}}) : bool
# CHECK:         %[[NOT:[0-9]+]] = sym::eq.default(%[[M]], 0) : bool
# CHECK-NEXT:    sym::lt.default(u1, 0.5) : bool
# CHECK:         aten::scalar_tensor.default(%[[AND]], dtype=bool, {{.*}})
# CHECK:         aten::scalar_tensor.default(%[[NOT]], dtype=bool, {{.*}})
# CHECK:         aten::cat.default({{.*}}) : tensor<bool, [5]>


def anded(ids):
    a, b, c = ids.tolist()
    return torch.tensor([a > 0 and b > 0])

# REFUSED: data-dependent-tensor-lists.py:[[# @LINE-2]]:26: error: data-dependent branch: the condition u0 > 0 depends on u0, a value computed from tensor data by torch.Tensor.tolist at data-dependent-tensor-lists.py:[[# @LINE-3]], which capture cannot decide


def ids_inputs():
    return (torch.tensor([5, 0, 7]),)


def example_inputs():
    return (torch.tensor([5, 0, 7]), torch.tensor([0.5, 1.5, -2.0]))
