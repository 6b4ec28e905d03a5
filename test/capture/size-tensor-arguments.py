# A one-element integer tensor given where an operator's schema takes an
# int, alone or in a list, is read first as an int from data (an item()
# node, "by torch.Tensor.__index__"): torch's parser would read it inside
# the call, a symbol no node computes. Where torch keeps the int symbolic
# (pad's amounts, new_zeros' size) it stays so; where the call needs the
# number (interpolate's size) it is specialized to the example's value
# with a fall-back check; a tensor given twice is read once. An overload
# taking the tensor as a tensor (`x + n`) reads nothing.
# RUN: %dync export %s:resized %s:padded %s:added --emit=graph 2>%t.err | FileCheck %s
# RUN: FileCheck %s --check-prefix=NOTES < %t.err
# RUN: not %dync export %s:resized --data-branches=refuse --emit=graph 2>&1 | FileCheck %s --check-prefix=REFUSE
import torch
import torch.nn.functional as F


def resized(x, lengths):
    h = lengths[0]
    return F.interpolate(x, size=(h, h), mode="nearest")


def padded(x, lengths):
    n = lengths[1]
    return F.pad(x, (0, n)), x.new_zeros(n, 2)


def added(x, lengths):
    return x + lengths[0]


def example_inputs():
    return torch.randn(1, 2, 4, 4), torch.tensor([3, 2])

# CHECK-LABEL: graph @resized
# CHECK:       %[[H:[0-9]+]] = aten::select.int(%lengths, 0, 0)
# CHECK-NEXT:  %{{[0-9]+}} = aten::_local_scalar_dense.default(%[[H]]) : int<u0>
# CHECK-NOT:   aten::_local_scalar_dense
# CHECK:       sym::eq.default(u0, 3) : bool
# CHECK:       aten::_assert_async.msg(%{{[0-9]+}}, "fall back: the int u0 computed from tensor data by torch.Tensor.__index__ at size-tensor-arguments.py:18, which size-tensor-arguments.py:18 needs as a number, differs from the example's value (3)
# CHECK:       : tensor<f32, [1, 2, 3, 3]>

# CHECK-LABEL: graph @padded
# CHECK:       symbols { u0: [0, inf] unbacked }
# CHECK:       aten::_local_scalar_dense.default(%{{[0-9]+}}) : int<u0>
# CHECK-NOT:   _assert_async
# CHECK:       aten::constant_pad_nd.default(%x, [0, u0], 0.0) : tensor<f32, [1, 2, 4, u0 + 4]
# CHECK:       aten::full.default([u0, 2], 0{{.*}} : tensor<f32, [u0, 2]>

# CHECK-LABEL: graph @added
# CHECK-NOT:   _local_scalar_dense
# CHECK:       aten::add.Tensor(%x, %{{[0-9]+}})

# NOTES: size-tensor-arguments.py:18: the int u0 computed from tensor data by torch.Tensor.__index__ at size-tensor-arguments.py:18 (return F.interpolate(x, size=(h, h), mode="nearest")) is specialized to the example's value (3)
# NOTES-NOT: specialized

# REFUSE: size-tensor-arguments.py:18:12: error: upsample_nearest2d
# REFUSE-NOT: specialized
