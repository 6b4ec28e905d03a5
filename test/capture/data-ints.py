# Ints read from tensor data that capture needs as numbers are specialized
# to the example's value: the graph checks `u0 == value` with a fall-back
# check before anything uses the number, and export notes each on stderr.
# --data-branches=refuse keeps the refusal.
# RUN: %dync export %s:trip_count %s:size_from_data --example size_from_data=size_from_data_inputs --emit=graph 2>%t.err | FileCheck %s
# RUN: FileCheck %s --check-prefix=NOTES < %t.err
# RUN: not %dync export %s:trip_count --data-branches=refuse --emit=graph 2>&1 | FileCheck %s --check-prefix=REFUSE
import torch
import torch.nn.functional as F


def trip_count(x, idx):
    hit = torch.greater(F.one_hot(idx, 4).sum(dim=0), 0).nonzero()
    out = torch.zeros_like(x)
    for e in hit:
        out = out + x * e
    return out


def size_from_data(x, mask):
    h = int(mask.sum(dim=0)[0].item())
    return F.interpolate(x, size=(h, h), mode="nearest")


def example_inputs():
    return torch.randn(3, 5), torch.tensor([0, 2, 2])


def size_from_data_inputs():
    return torch.randn(1, 2, 4, 4), torch.ones(3, 3)


# CHECK-LABEL: graph @trip_count(
# CHECK: symbols { u0: [0, 4] unbacked }
# CHECK: aten::nonzero.default({{.*}}) : tensor<i64, [u0, 1], [1, u0]>
# CHECK: %[[EQ:[0-9]+]] = sym::eq.default(u0, 2) : bool
# CHECK: aten::scalar_tensor.default(%[[EQ]]
# CHECK: aten::_assert_async.msg({{.*}}, "fall back: the int u0 computed from tensor data by torch.Tensor.nonzero at data-ints.py:13, which data-ints.py:15 needs as a number, differs from the example's value (2), to which the graph was specialized")
# CHECK: aten::select.int({{.*}}, 0, 0) : tensor<i64, [1], [2]>
# CHECK: aten::select.int({{.*}}, 0, 1) : tensor<i64, [1], [2]>
# CHECK-NOT: aten::select.int
# CHECK: return

# CHECK-LABEL: graph @size_from_data(
# CHECK: sym::int.default({{.*}}) : int<u0>
# CHECK: sym::eq.default(u0, 3) : bool
# CHECK: aten::_assert_async.msg({{.*}}, "fall back: the int u0 computed from tensor data by int at data-ints.py:21, which data-ints.py:22 needs as a number, differs from the example's value (3), to which the graph was specialized")
# CHECK: tensor<f32, [1, 2, 3, 3]>
# CHECK: return

# NOTES: note: trip_count: data-ints.py:15: the int u0 computed from tensor data by torch.Tensor.nonzero at data-ints.py:13 (for e in hit:) is specialized to the example's value (2); calls where it differs run the original code
# NOTES: note: size_from_data: data-ints.py:22: the int u0 computed from tensor data by int at data-ints.py:21 (return F.interpolate(x, size=(h, h), mode="nearest")) is specialized to the example's value (3)

# REFUSE: data-ints.py:15: error: iterating over a tensor: len needs the value of u0
# REFUSE-NOT: not specialized
