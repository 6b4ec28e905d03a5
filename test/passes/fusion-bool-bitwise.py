# &, | and ^ of bool tensors are the logical operations, element ops of
# kernels: an attention mask combining a padding mask and a causal one is
# one kernel with the comparisons that make them. On integers they are
# bitwise and stay ATen calls.
# RUN: %dync export %s:mask %s:ints --emit=optimized-graph | FileCheck %s
import torch


def mask(lengths, positions):
    padding = positions[None, :] < lengths[:, None]
    causal = positions[:, None] >= positions[None, :]
    both = padding[:, None, :] & causal[None]
    return both | (lengths[:, None, None] == 0), both ^ padding[:, None, :]


def ints(lengths, positions):
    return (lengths[:, None] & positions[None, :]) + 1


def example_inputs():
    return (torch.tensor([3, 5]), torch.arange(5))

# CHECK-LABEL: kernel @k2(
# CHECK-DAG:   aten::bitwise_and.Tensor
# CHECK-DAG:   aten::bitwise_or.Tensor
# CHECK-DAG:   aten::bitwise_xor.Tensor
# CHECK:       return
# CHECK-LABEL: graph @mask(
# CHECK-NOT:   aten::bitwise
# CHECK:       return
# CHECK-LABEL: graph @ints(
# CHECK:       aten::bitwise_and.Tensor
