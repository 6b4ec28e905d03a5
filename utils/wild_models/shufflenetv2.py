"""torchvision's ShuffleNetV2: `channel_shuffle` by `view`/`transpose(1, 2)`/
`contiguous`/`view`, the stride-1 unit splitting its input with
`x.chunk(2, dim=1)` and the stride-2 unit running two branches, depthwise
3x3 convs as `nn.Conv2d(groups=in)` built by a static method, stages
created with `setattr(self, name, nn.Sequential(*seq))` from zipped
`stages_repeats`/`stages_out_channels` lists, global mean over `[2, 3]`,
plus a CondConv-style routing in the head: `sigmoid` expert weights from
pooled features mixing a stacked kernel bank by `torch.mm` into per-sample
conv weights applied with `groups=batch`."""
from typing import List

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def channel_shuffle(x: Tensor, groups: int) -> Tensor:
    batchsize, num_channels, height, width = x.size()
    channels_per_group = num_channels // groups
    x = x.view(batchsize, groups, channels_per_group, height, width)
    x = torch.transpose(x, 1, 2).contiguous()
    x = x.view(batchsize, num_channels, height, width)
    return x


class InvertedResidual(nn.Module):
    def __init__(self, inp: int, oup: int, stride: int) -> None:
        super().__init__()
        if not (1 <= stride <= 3):
            raise ValueError("illegal stride value")
        self.stride = stride
        branch_features = oup // 2
        if self.stride > 1:
            self.branch1 = nn.Sequential(
                self.depthwise_conv(inp, inp, kernel_size=3, stride=self.stride, padding=1),
                nn.BatchNorm2d(inp),
                nn.Conv2d(inp, branch_features, kernel_size=1, stride=1, padding=0, bias=False),
                nn.BatchNorm2d(branch_features),
                nn.ReLU(inplace=True),
            )
        else:
            self.branch1 = nn.Sequential()
        self.branch2 = nn.Sequential(
            nn.Conv2d(inp if (self.stride > 1) else branch_features, branch_features, 1, 1, 0, bias=False),
            nn.BatchNorm2d(branch_features),
            nn.ReLU(inplace=True),
            self.depthwise_conv(branch_features, branch_features, kernel_size=3, stride=self.stride, padding=1),
            nn.BatchNorm2d(branch_features),
            nn.Conv2d(branch_features, branch_features, 1, 1, 0, bias=False),
            nn.BatchNorm2d(branch_features),
            nn.ReLU(inplace=True),
        )

    @staticmethod
    def depthwise_conv(i, o, kernel_size, stride=1, padding=0, bias=False):
        return nn.Conv2d(i, o, kernel_size, stride, padding, bias=bias, groups=i)

    def forward(self, x: Tensor) -> Tensor:
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = torch.cat((x1, self.branch2(x2)), dim=1)
        else:
            out = torch.cat((self.branch1(x), self.branch2(x)), dim=1)
        out = channel_shuffle(out, 2)
        return out


class CondConvHead(nn.Module):
    def __init__(self, channels, out_channels, experts=4):
        super().__init__()
        self.out_channels = out_channels
        self.route = nn.Linear(channels, experts)
        self.weight = nn.Parameter(torch.randn(experts, out_channels * channels) * channels ** -0.5)

    def forward(self, x):
        B, C, H, W = x.shape
        r = torch.sigmoid(self.route(x.mean([2, 3])))
        w = torch.mm(r, self.weight).view(B * self.out_channels, C, 1, 1)
        y = F.conv2d(x.reshape(1, B * C, H, W), w, groups=B)
        return y.view(B, self.out_channels, H, W)


class ShuffleNetV2(nn.Module):
    def __init__(self, stages_repeats: List[int] = (2, 2, 1), stages_out_channels: List[int] = (8, 16, 32, 64, 64),
                 num_classes: int = 10) -> None:
        super().__init__()
        self._stage_out_channels = stages_out_channels
        input_channels = 3
        output_channels = self._stage_out_channels[0]
        self.conv1 = nn.Sequential(nn.Conv2d(input_channels, output_channels, 3, 2, 1, bias=False),
                                   nn.BatchNorm2d(output_channels), nn.ReLU(inplace=True))
        input_channels = output_channels
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.stage2: nn.Sequential
        self.stage3: nn.Sequential
        self.stage4: nn.Sequential
        stage_names = [f"stage{i}" for i in [2, 3, 4]]
        for name, repeats, output_channels in zip(stage_names, stages_repeats, self._stage_out_channels[1:]):
            seq = [InvertedResidual(input_channels, output_channels, 2)]
            for i in range(repeats - 1):
                seq.append(InvertedResidual(output_channels, output_channels, 1))
            setattr(self, name, nn.Sequential(*seq))
            input_channels = output_channels
        output_channels = self._stage_out_channels[-1]
        self.conv5 = CondConvHead(input_channels, output_channels)
        self.fc = nn.Linear(output_channels, num_classes)

    def _forward_impl(self, x: Tensor) -> Tensor:
        x = self.conv1(x)
        x = self.maxpool(x)
        x = self.stage2(x)
        x = self.stage3(x)
        x = self.stage4(x)
        x = F.relu(self.conv5(x))
        x = x.mean([2, 3])
        return self.fc(x)

    def forward(self, x: Tensor) -> Tensor:
        return self._forward_impl(x)


torch.manual_seed(0)
model = ShuffleNetV2().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randn(2, 3, 64, 64, generator=g)
