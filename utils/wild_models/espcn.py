"""Super-resolution networks as EDSR and ESPCN ports write them: a MeanShift
layer (a 1x1 Conv2d with fixed weights from torch.eye and requires_grad
set False), residual blocks scaled by a res_scale, an upsampler of conv
and nn.PixelShuffle built in a loop over log2(scale), and F.pixel_unshuffle
for a space-to-depth input stem."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MeanShift(nn.Conv2d):
    def __init__(self, rgb_range, rgb_mean=(0.4488, 0.4371, 0.4040), rgb_std=(1.0, 1.0, 1.0), sign=-1):
        super().__init__(3, 3, kernel_size=1)
        std = torch.Tensor(rgb_std)
        self.weight.data = torch.eye(3).view(3, 3, 1, 1) / std.view(3, 1, 1, 1)
        self.bias.data = sign * rgb_range * torch.Tensor(rgb_mean) / std
        for p in self.parameters():
            p.requires_grad = False


class ResBlock(nn.Module):
    def __init__(self, n_feats, kernel_size=3, res_scale=0.1):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(n_feats, n_feats, kernel_size, padding=kernel_size // 2), nn.ReLU(True),
                                  nn.Conv2d(n_feats, n_feats, kernel_size, padding=kernel_size // 2))
        self.res_scale = res_scale

    def forward(self, x):
        return self.body(x).mul(self.res_scale) + x


class Upsampler(nn.Sequential):
    def __init__(self, scale, n_feats):
        m = []
        for _ in range(int(math.log(scale, 2))):
            m.append(nn.Conv2d(n_feats, 4 * n_feats, 3, padding=1))
            m.append(nn.PixelShuffle(2))
        super().__init__(*m)


class EDSR(nn.Module):
    def __init__(self, n_feats=16, n_resblocks=3, scale=4):
        super().__init__()
        self.sub_mean = MeanShift(1.0)
        self.add_mean = MeanShift(1.0, sign=1)
        self.head = nn.Conv2d(3 * 4, n_feats, 3, padding=1)
        self.body = nn.Sequential(*[ResBlock(n_feats) for _ in range(n_resblocks)],
                                  nn.Conv2d(n_feats, n_feats, 3, padding=1))
        self.tail = nn.Sequential(Upsampler(scale, n_feats), nn.Conv2d(n_feats, 3, 3, padding=1))

    def forward(self, x):
        x = self.sub_mean(x)
        x = self.head(F.pixel_unshuffle(x, 2))
        res = self.body(x)
        res += x
        return self.add_mean(self.tail(res))


torch.manual_seed(0)
model = EDSR().eval()
check_gradients = True


def example_inputs():
    return (torch.rand(2, 3, 8, 8, generator=torch.Generator().manual_seed(1)),)
