# A view's result has ATen's strides, including the stride of a dimension
# of size 1, which torch's fake view computes otherwise: a [1, 64, 32]
# tensor transposed (strides [2048, 1, 32]) and viewed as [1, 32, 8, 8]
# gets strides [32, 1, 256, 32] from ATen, [2048, 1, 256, 32] from the
# fake. No address depends on that stride, but a convolution's choice of
# memory format does: with ATen's strides the depthwise convolution's
# result is contiguous, as eager's is; with the fake's it would be
# channels-last, and the kernels after it would read it so.
# RUN: %dync export %s:Block.forward --emit=graph | FileCheck %s
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.dwconv = nn.Conv2d(32, 32, 3, padding=1, groups=32)

    def forward(self, x):
        y = self.dwconv(x.transpose(1, 2).view(1, 32, 8, 8))
        return y.flatten(2).transpose(1, 2)


def example_inputs():
    return (torch.randn(1, 64, 32),)

# CHECK: aten::view.default({{.*}}) : tensor<f32, [1, 32, 8, 8], [32, 1, 256, 32]>
# CHECK: aten::convolution.default({{.*}}) : tensor<f32, [1, 32, 8, 8]>
# CHECK: return
