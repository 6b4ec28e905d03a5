# The unsafe splits (unsafe_split, unsafe_split_with_sizes, and unsafe_chunk,
# which reaches them) become one slice per piece. torch's core-ATen table
# maps them to split_with_sizes, whose outputs autograd forbids writing in
# place; graphs keep in-place calls, and LSTMCell's and GRUCell's kernels
# write their gates in place. Sizes that do not add up stop capture with
# torch's own message.
# RUN: %dync export %s:chunks %s:pieces %s:sized %s:LSTM.forward --emit=graph | FileCheck %s
# RUN: not %dync export %s:wrong_sizes --emit=graph 2>&1 | FileCheck %s --check-prefix=SIZES
import torch


def chunks(x):
    a, b, c = torch.unsafe_chunk(x, 3, dim=1)
    return a.sigmoid_(), b, c


def pieces(x):
    return torch.unsafe_split(x, 4, dim=-1)


def sized(x):
    return torch.unsafe_split_with_sizes(x, [2, 7], dim=1)


def wrong_sizes(x):
    return torch.unsafe_split_with_sizes(x, [2, 3], dim=1)


class LSTM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = torch.nn.LSTMCell(9, 3)

    def forward(self, x):
        return self.cell(x)


def example_inputs():
    return (torch.randn(2, 9),)

# CHECK-LABEL: graph @chunks(
# CHECK-NEXT:  %0 = aten::slice.Tensor(%x, 1, 0, 3) : tensor<f32, [2, 3], [9, 1]>
# CHECK-NEXT:  %1 = aten::slice.Tensor(%x, 1, 3, 6) : tensor<f32, [2, 3], [9, 1]>
# CHECK-NEXT:  %2 = aten::slice.Tensor(%x, 1, 6, 9) : tensor<f32, [2, 3], [9, 1]>
# CHECK-NEXT:  %3 = aten::sigmoid_.default(%0) : tensor<f32, [2, 3], [9, 1]>
# CHECK-NEXT:  return (%3, %1, %2)

# The last piece is what is left.
# CHECK-LABEL: graph @pieces(
# CHECK-NEXT:  %0 = aten::slice.Tensor(%x, 1, 0, 4) : tensor<f32, [2, 4], [9, 1]>
# CHECK-NEXT:  %1 = aten::slice.Tensor(%x, 1, 4, 8) : tensor<f32, [2, 4], [9, 1]>
# CHECK-NEXT:  %2 = aten::slice.Tensor(%x, 1, 8, 9) : tensor<f32, [2, 1], [9, 1]>
# CHECK-NEXT:  return (%0, %1, %2)

# CHECK-LABEL: graph @sized(
# CHECK-NEXT:  %0 = aten::slice.Tensor(%x, 1, 0, 2) : tensor<f32, [2, 2], [9, 1]>
# CHECK-NEXT:  %1 = aten::slice.Tensor(%x, 1, 2, 9) : tensor<f32, [2, 7], [9, 1]>
# CHECK-NEXT:  return (%0, %1)

# CHECK-LABEL: graph @LSTM.forward(
# CHECK-NOT:   split_with_sizes
# CHECK:       aten::slice.Tensor(%{{[0-9]+}}, 1, 0, 3) : tensor<f32, [2, 3], [12, 1]>
# CHECK-NEXT:  aten::slice.Tensor(%{{[0-9]+}}, 1, 3, 6)
# CHECK-NEXT:  aten::slice.Tensor(%{{[0-9]+}}, 1, 6, 9)
# CHECK-NEXT:  aten::slice.Tensor(%{{[0-9]+}}, 1, 9, 12)
# CHECK-NEXT:  aten::sigmoid_.default
# CHECK-NOT:   split_with_sizes
# CHECK:       return

# SIZES: unsafe-split.py:[[# @LINE - 44]]:12: error: calling torch.unsafe_split_with_sizes with the example's sizes raised RuntimeError: split_with_sizes expects split_sizes to sum exactly to 9 (input tensor's size at dimension 1), but got split_sizes=[2, 3]
