"""A StyleGAN2-style modulated convolution as the reference ports write it:
a mapping network to a style vector, per-sample weights modulated by the
style and demodulated with rsqrt, the batch folded into groups (the input
reshaped to one sample of batch x channels, grouped conv2d with groups =
batch), noise injection from a fixed buffer scaled by a learned weight,
and an upsampling layer with F.interpolate."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class ModulatedConv2d(nn.Module):
    def __init__(self, in_channel, out_channel, kernel_size, style_dim, demodulate=True):
        super().__init__()
        self.kernel_size, self.in_channel, self.out_channel = kernel_size, in_channel, out_channel
        self.scale = 1 / math.sqrt(in_channel * kernel_size ** 2)
        self.padding = kernel_size // 2
        self.weight = nn.Parameter(torch.randn(1, out_channel, in_channel, kernel_size, kernel_size))
        self.modulation = nn.Linear(style_dim, in_channel)
        self.demodulate = demodulate

    def forward(self, input, style):
        batch, in_channel, height, width = input.shape
        style = self.modulation(style).view(batch, 1, in_channel, 1, 1)
        weight = self.scale * self.weight * style
        if self.demodulate:
            demod = torch.rsqrt(weight.pow(2).sum([2, 3, 4]) + 1e-8)
            weight = weight * demod.view(batch, self.out_channel, 1, 1, 1)
        weight = weight.view(batch * self.out_channel, in_channel, self.kernel_size, self.kernel_size)
        input = input.view(1, batch * in_channel, height, width)
        out = F.conv2d(input, weight, padding=self.padding, groups=batch)
        _, _, height, width = out.shape
        return out.view(batch, self.out_channel, height, width)


class StyledLayer(nn.Module):
    def __init__(self, in_channel, out_channel, style_dim, size):
        super().__init__()
        self.conv = ModulatedConv2d(in_channel, out_channel, 3, style_dim)
        self.noise_weight = nn.Parameter(torch.full((1,), 0.1))
        self.register_buffer("noise", torch.randn(1, 1, size, size))
        self.bias = nn.Parameter(torch.zeros(1, out_channel, 1, 1))

    def forward(self, x, style):
        out = self.conv(x, style)
        out = out + self.noise_weight * self.noise
        return F.leaky_relu(out + self.bias, 0.2) * math.sqrt(2)


class Generator(nn.Module):
    def __init__(self, style_dim=16, channels=8):
        super().__init__()
        self.mapping = nn.Sequential(nn.Linear(style_dim, style_dim), nn.LeakyReLU(0.2),
                                     nn.Linear(style_dim, style_dim))
        self.const = nn.Parameter(torch.randn(1, channels, 4, 4))
        self.layer1 = StyledLayer(channels, channels, style_dim, 4)
        self.layer2 = StyledLayer(channels, channels, style_dim, 8)
        self.to_rgb = ModulatedConv2d(channels, 3, 1, style_dim, demodulate=False)

    def forward(self, z):
        w = self.mapping(F.normalize(z, dim=1))
        x = self.const.repeat(z.shape[0], 1, 1, 1)
        x = self.layer1(x, w)
        x = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
        x = self.layer2(x, w)
        return self.to_rgb(x, w)


torch.manual_seed(0)
model = Generator().eval()
check_gradients = True


def example_inputs():
    return (torch.randn(3, 16, generator=torch.Generator().manual_seed(1)),)
