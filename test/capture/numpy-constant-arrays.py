# NumPy arrays made from constants are constants: library code plans with
# them (BigBird's block-sparse attention builds its random-block table as
# arrays of zeros in eval mode, slices them per head, stacks them, and makes
# the index tensor from the stack). Their items, slices and arithmetic run in
# NumPy, a NumPy scalar among them is the Python number it holds, and the
# tensor made from them is a small tensor constant. Storing into one is
# refused, as is a tensor constant too large for a graph.
# RUN: %dync export %s:plan --emit=graph | FileCheck %s
# RUN: not %dync export %s:store --emit=graph 2>&1 | FileCheck %s --check-prefix=STORE
# RUN: not %dync export %s:too_large --emit=graph 2>&1 | FileCheck %s --check-prefix=LARGE
import numpy as np
import torch


def plan(x):
    blocks = np.array([8, 12]) // 4
    rows = [np.zeros((int(blocks[1]) + 1, 2), dtype=np.int32) for _ in range(2)]
    for head in range(2):
        rows[head] = rows[head][1:-1, :] + head
    index = torch.tensor(np.stack(rows, axis=0), dtype=torch.long)
    return x[index] * int(np.sum(blocks)) + blocks[0]

# CHECK-LABEL: graph @plan(
# CHECK:       %[[S:[0-9]+]] = aten::stack.default(
# CHECK-SAME:  : tensor<i32, [8]>
# CHECK:       %[[V:[0-9]+]] = aten::view.default(%[[S]], [2, 2, 2])
# CHECK:       %[[L:[0-9]+]] = aten::_to_copy.default(%[[V]], dtype=i64
# CHECK:       %[[I:[0-9]+]] = aten::index.Tensor(%x, [%[[L]]]) : tensor<f32, [2, 2, 2, 5]>
# CHECK:       %[[M:[0-9]+]] = aten::mul.Tensor(%[[I]], 5)
# CHECK:       aten::add.Tensor(%[[M]], 2)


def store(x):
    table = np.zeros(3, dtype=np.float32)
    table[1] = 2.0
    return x + torch.from_numpy(table)

# STORE: numpy-constant-arrays.py:[[@LINE-3]]:5: error: item assignment on a numpy.ndarray value is not supported


def too_large(x):
    return x + torch.tensor(np.zeros((10, 10), dtype=np.float32)).sum()

# LARGE: numpy-constant-arrays.py:[[@LINE-2]]:16: error: {{.*}}at most 64 elements


def example_inputs():
    return (torch.randn(3, 5),)
