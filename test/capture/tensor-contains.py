# `item in tensor` is what Tensor.__contains__ makes of it: whether any
# element equals the item, `(item == t).any()`, read as a bool, so a
# decision on the tensor's data, specialized to the example's side and
# checked when the graph runs (docs/capture.md, "Decisions on data,
# specialized to the example"). An item that is neither a tensor nor a
# number is refused, as eager raises.
# RUN: %dync export %s:has_pad %s:has_value --emit=graph 2>%t.err | FileCheck %s
# RUN: FileCheck %s --check-prefix=NOTE < %t.err
# RUN: not %dync export %s:text_in --emit=graph 2>&1 | FileCheck %s --check-prefix=TEXT
import torch


def example_inputs():
    return (torch.randn(3), torch.tensor([[1, 2, 0], [3, 4, 5]]))


def has_pad(x, ids):
    if 0 in ids[:, [-1, 0]]:
        return x + 1
    return x - 1

# CHECK-LABEL: graph @has_pad(
# CHECK:         %[[COLS:[0-9]+]] = aten::index.Tensor(%ids,
# CHECK-NEXT:    %[[EQ:[0-9]+]] = aten::eq.Scalar(%[[COLS]], 0)
# CHECK-NEXT:    %[[ANY:[0-9]+]] = aten::any.default(%[[EQ]])
# CHECK-NEXT:    aten::_assert_async.msg(%[[ANY]], "fall back: the decision on tensor data at tensor-contains.py:18 takes the other side than the example's (True)
# CHECK-NEXT:    %[[Y:[0-9]+]] = aten::add.Tensor(%x, 1)
# CHECK-NEXT:    return %[[Y]]

# NOTE: tensor-contains.py:18: the decision on tensor data (if 0 in ids[:, [-1, 0]]:) is specialized to the example's side (True)


def has_value(x, ids):
    if x[0] in x[1:]:
        return x * 2
    return x * 3

# CHECK-LABEL: graph @has_value(
# CHECK:         aten::eq.Tensor
# CHECK-NEXT:    %[[ANY2:[0-9]+]] = aten::any.default(
# CHECK-NEXT:    %[[NOT:[0-9]+]] = aten::logical_not.default(%[[ANY2]])
# CHECK-NEXT:    aten::_assert_async.msg(%[[NOT]], "fall back: the decision on tensor data at tensor-contains.py:34 takes the other side than the example's (False)
# CHECK:         aten::mul.Tensor(%x, 3)


def text_in(x, ids):
    return "a" in ids

# TEXT: tensor-contains.py:[[#@LINE-2]]:{{[0-9]+}}: error: 'in' on a tensor asks whether any element equals the item, which must be a tensor or a number, not a str (eager raises RuntimeError too)
