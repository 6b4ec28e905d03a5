# A tensor indexed by an integer known only from tensor data, a 0-d integer
# tensor (DDIM's `alphas_cumprod[t]`) or an `item()` int, among ints,
# slices, None and Ellipsis: as eager does, the number is read with item()
# and each integer selects, so the graph holds an unbacked symbol and the
# select checks its bounds when it runs. A 1-d index tensor stays an index.
# RUN: %dync export %s:scalar_tensor %s:item_int %s:mixed %s:index_tensor --emit=graph | FileCheck %s
import torch

table = torch.arange(24.0).reshape(4, 6)


def scalar_tensor(t):
    return table[t] * 2


# CHECK-LABEL: graph @scalar_tensor(
# CHECK: %[[N:[0-9]+]] = aten::_local_scalar_dense.default(%t) : int<u0>
# CHECK-NEXT: aten::select.int(%{{.*}}, 0, u0) : tensor<f32, [6]>


def item_int(t):
    return table[t.item()]


# CHECK-LABEL: graph @item_int(
# CHECK: aten::_local_scalar_dense.default(%t) : int<u0>
# CHECK-NEXT: aten::select.int(%{{.*}}, 0, u0) : tensor<f32, [6]>


def mixed(t):
    return table[None, ..., 1:, t]


# CHECK-LABEL: graph @mixed(
# CHECK: aten::unsqueeze.default
# CHECK: aten::slice.Tensor
# CHECK: aten::_local_scalar_dense.default(%t) : int<u0>
# CHECK: aten::select.int(%{{.*}}, 2, u0) : tensor<f32, [1, 3], [24, 6]>


def index_tensor(t):
    return table[t.reshape(1)]


# CHECK-LABEL: graph @index_tensor(
# CHECK-NOT: _local_scalar_dense
# CHECK: aten::index.Tensor


def example_inputs():
    return (torch.tensor(2),)


scalar_tensor_inputs = item_int_inputs = mixed_inputs = index_tensor_inputs = example_inputs
