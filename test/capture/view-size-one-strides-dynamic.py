# A view's size-1 dimensions get ATen's strides under symbolic sizes too.
# SegFormer's Mix-FFN at batch 1 with a symbolic height: the transposed
# [1, 4*H, 32] tensor viewed as [1, 32, H, 4] gets stride 32 for the batch
# from ATen, 128*H from torch's fake view. With the fake's, the depthwise
# convolution's result would be channels-last where eager's is contiguous.
# RUN: %dync export %s:Block.forward --emit=graph --dynamic 'x:2=H[2,16]' \
# RUN:   | FileCheck %s
# Exported over batch, height and width, the graph for batch 1 stays apart
# from the general one at the convolution (the general graph's is
# channels-last, as eager's is there), where it was folded into it before.
# RUN: rm -rf %t && mkdir -p %t
# RUN: %dync export %s:Block.forward -o %t/block.dync.so --dynamic 'x:0=b[1,8]' \
# RUN:   --dynamic 'x:2=H[2,16]' --example Block.forward=example_batch 2>&1 \
# RUN:   | FileCheck %s --check-prefix=NOTES
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc1 = nn.Linear(16, 32)
        self.dwconv = nn.Conv2d(32, 32, 3, padding=1, groups=32)

    def forward(self, x):
        b, _, height, width = x.shape
        h = self.fc1(x.flatten(2).transpose(1, 2))
        h = h.transpose(1, 2).view(b, 32, height, width)
        return self.dwconv(h).flatten(2).transpose(1, 2)


def example_inputs():
    return (torch.randn(1, 16, 4, 4),)


def example_batch():
    return (torch.randn(2, 16, 4, 4),)

# CHECK: aten::view.default({{.*}}, [1, 32, H, 4]) : tensor<f32, [1, 32, H, 4], [32, 1, 128, 32]>
# CHECK: aten::convolution.default({{.*}}) : tensor<f32, [1, 32, H, 4]> loc
# CHECK: return

# NOTES: the graph for b = 1 stays apart: it computes `%{{[0-9]+}} = aten::convolution.default({{.*}}) : tensor<f32, [1, 32, H, 4]>` where the general graph computes `%{{[0-9]+}} = aten::convolution.default({{.*}}) : tensor<f32, [1, 32, H, 4], [128*H, 1, 128, 32]>`
