# Python's min and max of numbers read from tensor data. Over ints they are
# the symbolic minimum and maximum (torch.sym_min, sym_max), as over sizes:
# nothing to decide. With a float among them, which item Python returns
# (and so its type) is a decision on the data, made as CPython makes it
# (each item compared with the best so far) and specialized to the
# example's side with a fall-back check, as for tensors; with
# --data-branches=refuse it is refused at the line.
# RUN: %dync export %s:max_of_floats %s:min_with_constant %s:max_of_ints %s:max_int_and_float --emit=graph 2>%t.err | FileCheck %s
# RUN: FileCheck %s --check-prefix=NOTES < %t.err
# RUN: not %dync export %s:max_of_floats --data-branches=refuse --emit=graph 2>&1 | FileCheck %s --check-prefix=REFUSE
import torch


def max_of_floats(x, t):
    s, u = t[0].item(), t[1].item()
    return x * max(s, u)


def min_with_constant(x, t):
    s = t[0].item()
    return x * min(s, 1.0)


def max_of_ints(x, t):
    k = t.sum().int().item()
    return x * max(k, 3)


def max_int_and_float(x, t):
    k = t.sum().int().item()
    return x * max(t[0].item(), k)


def example_inputs():
    return torch.randn(3), torch.tensor([0.5, 1.5])

# CHECK-LABEL: graph @max_of_floats
# CHECK:       %[[S:[0-9]+]] = aten::_local_scalar_dense.default(%{{[0-9]+}}) : float
# CHECK:       %[[U:[0-9]+]] = aten::_local_scalar_dense.default(%{{[0-9]+}}) : float
# CHECK-NEXT:  %[[GT:[0-9]+]] = sym::gt.default(%[[U]], %[[S]]) : bool
# CHECK:       aten::_assert_async.msg(%{{[0-9]+}}, "fall back: the decision on tensor data at data-numbers-min-max.py:16 takes the other side than the example's (True)
# CHECK-NEXT:  aten::mul.Tensor(%x, %[[U]])

# CHECK-LABEL: graph @min_with_constant
# CHECK:       %[[S:[0-9]+]] = aten::_local_scalar_dense.default(%{{[0-9]+}}) : float
# CHECK-NEXT:  sym::lt.default(1.0, %[[S]]) : bool
# CHECK:       aten::logical_not.default
# CHECK-NEXT:  aten::_assert_async.msg(%{{[0-9]+}}, "fall back: the decision on tensor data at data-numbers-min-max.py:21 takes the other side than the example's (False)
# CHECK-NEXT:  aten::mul.Tensor(%x, %[[S]])

# CHECK-LABEL: graph @max_of_ints
# CHECK-NOT:   _assert_async
# CHECK:       aten::mul.Tensor(%x, max(u0, 3))

# CHECK-LABEL: graph @max_int_and_float
# CHECK:       sym::gt.default(u0, %{{[0-9]+}}) : bool
# CHECK:       aten::_assert_async.msg
# CHECK-NEXT:  aten::mul.Tensor(%x, u0)

# NOTES: data-numbers-min-max.py:16: the decision on tensor data (return x * max(s, u)) is specialized to the example's side (True)
# NOTES: data-numbers-min-max.py:21: the decision on tensor data (return x * min(s, 1.0)) is specialized to the example's side (False)
# NOTES-NOT: data-numbers-min-max.py:26
# NOTES: data-numbers-min-max.py:31: the decision on tensor data (return x * max(t[0].item(), k)) is specialized to the example's side (True)

# REFUSE: data-numbers-min-max.py:16:16: error: max() of numbers computed from tensor data decides which to return by the truth of a comparison of their data: {{.*}}(torch.maximum of the tensors they were read from is the graph's own max)
