# A tensor constant with no elements (`torch.tensor([])`, as transformers'
# dynamic cache layer starts its keys) is an empty tensor of its shape and
# dtype: there are no numbers to stack.
# RUN: %dync export %s:start_keys --emit=graph | FileCheck %s
import torch


def start_keys(x):
    keys = torch.tensor([], dtype=x.dtype, device=x.device)
    pairs = torch.tensor([[], []], dtype=torch.long)
    return torch.cat([keys, x.reshape(-1)]), keys, pairs + 1

# CHECK-LABEL: graph @start_keys(
# CHECK-NOT:   aten::stack
# CHECK:       aten::empty.memory_format([0], dtype=f32
# CHECK-NOT:   aten::stack
# CHECK:       aten::empty.memory_format([2, 0], dtype=i64
# CHECK-NOT:   aten::stack
# CHECK:       return


def example_inputs():
    return (torch.randn(2, 3),)
