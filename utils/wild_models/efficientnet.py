"""EfficientNet-style MBConv blocks as in the lukemelas/timm ports:
static-same padding computed in forward with math.ceil, swish written as
x * sigmoid(x), squeeze-excite with F.adaptive_avg_pool2d, and a
drop_connect function gated on `self.training`."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Swish(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)


def drop_connect(inputs, p, training):
    assert 0 <= p <= 1, "p must be in range of [0,1]"
    if not training:
        return inputs
    batch_size = inputs.shape[0]
    keep_prob = 1 - p
    random_tensor = keep_prob
    random_tensor += torch.rand([batch_size, 1, 1, 1], dtype=inputs.dtype, device=inputs.device)
    binary_tensor = torch.floor(random_tensor)
    return inputs / keep_prob * binary_tensor


class Conv2dDynamicSamePadding(nn.Conv2d):
    """TensorFlow's 'SAME' padding, computed from the input's size."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, groups=1, bias=True):
        super().__init__(in_channels, out_channels, kernel_size, stride, 0, 1, groups, bias)
        self.stride = self.stride if len(self.stride) == 2 else [self.stride[0]] * 2

    def forward(self, x):
        ih, iw = x.size()[-2:]
        kh, kw = self.weight.size()[-2:]
        sh, sw = self.stride
        oh, ow = math.ceil(ih / sh), math.ceil(iw / sw)
        pad_h = max((oh - 1) * self.stride[0] + (kh - 1) * self.dilation[0] + 1 - ih, 0)
        pad_w = max((ow - 1) * self.stride[1] + (kw - 1) * self.dilation[1] + 1 - iw, 0)
        if pad_h > 0 or pad_w > 0:
            x = F.pad(x, [pad_w // 2, pad_w - pad_w // 2, pad_h // 2, pad_h - pad_h // 2])
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class MBConvBlock(nn.Module):
    def __init__(self, in_filters, out_filters, expand_ratio, kernel_size, stride, se_ratio=0.25,
                 id_skip=True):
        super().__init__()
        self._bn_mom, self._bn_eps = 0.01, 1e-3
        self.has_se = se_ratio is not None and 0 < se_ratio <= 1
        self.id_skip = id_skip
        self.in_filters, self.out_filters, self.stride = in_filters, out_filters, stride
        self.expand_ratio = expand_ratio
        oup = in_filters * expand_ratio
        if expand_ratio != 1:
            self._expand_conv = Conv2dDynamicSamePadding(in_filters, oup, 1, bias=False)
            self._bn0 = nn.BatchNorm2d(oup, momentum=self._bn_mom, eps=self._bn_eps)
        self._depthwise_conv = Conv2dDynamicSamePadding(oup, oup, kernel_size, stride=stride,
                                                        groups=oup, bias=False)
        self._bn1 = nn.BatchNorm2d(oup, momentum=self._bn_mom, eps=self._bn_eps)
        if self.has_se:
            num_squeezed = max(1, int(in_filters * se_ratio))
            self._se_reduce = nn.Conv2d(oup, num_squeezed, 1)
            self._se_expand = nn.Conv2d(num_squeezed, oup, 1)
        self._project_conv = Conv2dDynamicSamePadding(oup, out_filters, 1, bias=False)
        self._bn2 = nn.BatchNorm2d(out_filters, momentum=self._bn_mom, eps=self._bn_eps)
        self._swish = Swish()

    def forward(self, inputs, drop_connect_rate=None):
        x = inputs
        if self.expand_ratio != 1:
            x = self._swish(self._bn0(self._expand_conv(inputs)))
        x = self._swish(self._bn1(self._depthwise_conv(x)))
        if self.has_se:
            x_squeezed = F.adaptive_avg_pool2d(x, 1)
            x_squeezed = self._se_expand(self._swish(self._se_reduce(x_squeezed)))
            x = torch.sigmoid(x_squeezed) * x
        x = self._bn2(self._project_conv(x))
        if self.id_skip and self.stride == 1 and self.in_filters == self.out_filters:
            if drop_connect_rate:
                x = drop_connect(x, p=drop_connect_rate, training=self.training)
            x = x + inputs
        return x


class EfficientNet(nn.Module):
    # (expand, kernel, stride, in, out, repeats)
    blocks_args = [(1, 3, 1, 16, 8, 1), (6, 3, 2, 8, 12, 2), (6, 5, 2, 12, 20, 2)]

    def __init__(self, num_classes=10, drop_connect_rate=0.2):
        super().__init__()
        self.drop_connect_rate = drop_connect_rate
        self._conv_stem = Conv2dDynamicSamePadding(3, 16, 3, stride=2, bias=False)
        self._bn0 = nn.BatchNorm2d(16, momentum=0.01, eps=1e-3)
        self._blocks = nn.ModuleList([])
        for expand, kernel, stride, inp, out, repeats in self.blocks_args:
            self._blocks.append(MBConvBlock(inp, out, expand, kernel, stride))
            for _ in range(repeats - 1):
                self._blocks.append(MBConvBlock(out, out, expand, kernel, 1))
        self._conv_head = Conv2dDynamicSamePadding(20, 64, 1, bias=False)
        self._bn1 = nn.BatchNorm2d(64, momentum=0.01, eps=1e-3)
        self._avg_pooling = nn.AdaptiveAvgPool2d(1)
        self._dropout = nn.Dropout(0.2)
        self._fc = nn.Linear(64, num_classes)
        self._swish = Swish()

    def extract_features(self, inputs):
        x = self._swish(self._bn0(self._conv_stem(inputs)))
        for idx, block in enumerate(self._blocks):
            drop_connect_rate = self.drop_connect_rate
            if drop_connect_rate:
                drop_connect_rate *= float(idx) / len(self._blocks)
            x = block(x, drop_connect_rate=drop_connect_rate)
        return self._swish(self._bn1(self._conv_head(x)))

    def forward(self, inputs):
        x = self.extract_features(inputs)
        x = self._avg_pooling(x)
        x = x.flatten(start_dim=1)
        x = self._dropout(x)
        return self._fc(x)


torch.manual_seed(0)
model = EfficientNet().eval()


def example_inputs():
    return torch.randn(2, 3, 30, 30, generator=torch.Generator().manual_seed(1))
