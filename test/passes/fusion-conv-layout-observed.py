# A convolution's channels-last result is a layout choice the program must
# not see. A patch embedding views the result as tokens (flatten(2) is a
# view of an NCHW tensor, a copy of a channels-last one), so the captured
# graph converts the convolution's result back to eager mode's layout right
# after it, and the view reads the NCHW copy. A program reading stride()
# gets eager's strides, and branches as eager mode does. A pool read only
# for its values keeps channels-last up to the return.
# RUN: %dync export %s:patch_embed %s:strides %s:unobserved --emit=graph | FileCheck %s
# RUN: %dync export %s:patch_embed -O0 --emit=graph | FileCheck %s --check-prefix=CORE
import torch
import torch.nn.functional as F

W = torch.randn(16, 3, 4, 4)
LN = torch.ones(16)


def patch_embed(x):
    tokens = F.conv2d(x, W, stride=4).flatten(2).transpose(1, 2)
    return F.layer_norm(tokens, (16,), LN)


def strides(x):
    y = F.conv2d(x, W, padding=1)
    if y.is_contiguous():
        return y + 1, y.stride()
    return y - 1, y.stride()


def unobserved(x):
    return F.max_pool2d(torch.relu(F.conv2d(x, W, stride=4)), 2)


def example_inputs():
    return (torch.randn(2, 3, 16, 16),)
