# torch.tensor and torch.as_tensor of a nested list holding integers read
# from tensor data (tolist(), item()) and the program's integer arithmetic on
# them: each number a 0-d scalar_tensor of the dtype eager infers (or the one
# given), stacked level by level, so the graph computes the values eager
# copies in. A bool the program computed by comparing such integers
# (ColBERT's `x != pad`) is computed by the graph from them: ne, lt,
# logical_and... of 0-d tensors. A float computed from such integers by
# Python float arithmetic has no node that computes it: refused with the
# user's line.
# RUN: %dync export %s:shifted %s:nested %s:given %s:compared --example shifted=ids_inputs --example nested=ids_inputs --example compared=ids_inputs --emit=graph | FileCheck %s
# RUN: not %dync export %s:halved --example ids_inputs --emit=graph 2>&1 | FileCheck %s --check-prefix=FLOAT
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
# CHECK:         aten::scalar_tensor.default(u0, dtype=i64, {{.*}})
# CHECK:         aten::ne.Tensor({{.*}}) : tensor<bool, []>
# CHECK:         aten::lt.Tensor({{.*}}) : tensor<bool, []>
# CHECK:         aten::cat.default({{.*}}) : tensor<bool, [4]>


def halved(ids):
    return torch.tensor([v * 0.5 for v in ids.tolist()])

# FLOAT: data-dependent-tensor-lists.py:[[# @LINE-2]]:12: error: _VariableFunctionsClass.tensor takes a symbolic float (0.5*ToFloat(u0)) that no node of the graph computes


def ids_inputs():
    return (torch.tensor([5, 0, 7]),)


def example_inputs():
    return (torch.tensor([5, 0, 7]), torch.tensor([0.5, 1.5, -2.0]))
