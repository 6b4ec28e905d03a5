"""Content-aware upsampling (CARAFE, as the pure-PyTorch fallbacks in
mmcv-free segmentation repos write it) and involution: a channel
compressor, a content encoder predicting `k_up^2 * scale^2` kernels,
`F.pixel_shuffle` to the upsampled grid and a softmax over the kernel
taps; the input's neighbourhoods by `F.unfold(x, k, dilation, padding)`
viewed as `[B, C, k*k, H, W]`, repeated to the output grid by
`F.interpolate(mode="nearest")`, reassembled by `einsum`; an involution
layer generating a per-pixel kernel shared by channel groups, again by
`F.unfold` and a sum over taps; and an `F.fold` overlap-add that undoes a
stride-2 unfold, normalised by folding ones."""
import torch
import torch.nn.functional as F
from torch import nn


class CARAFE(nn.Module):
    def __init__(self, channels, scale=2, k_up=5, k_enc=3, c_mid=16):
        super().__init__()
        self.scale = scale
        self.k_up = k_up
        self.comp = nn.Conv2d(channels, c_mid, 1)
        self.enc = nn.Conv2d(c_mid, (scale * k_up) ** 2, k_enc, padding=k_enc // 2)
        self.out = nn.Conv2d(channels, channels, 1)

    def forward(self, x):
        B, C, H, W = x.shape
        s, k = self.scale, self.k_up
        kernels = self.enc(self.comp(x))
        kernels = F.pixel_shuffle(kernels, s)  # [B, k*k, sH, sW]
        kernels = F.softmax(kernels, dim=1)
        patches = F.unfold(x, kernel_size=k, dilation=1, padding=k // 2)  # [B, C*k*k, H*W]
        patches = patches.view(B, C * k * k, H, W)
        patches = F.interpolate(patches, scale_factor=s, mode="nearest")
        patches = patches.view(B, C, k * k, H * s, W * s)
        out = torch.einsum("bckhw,bkhw->bchw", patches, kernels)
        return self.out(out)


class Involution(nn.Module):
    def __init__(self, channels, kernel_size=3, stride=1, group_channels=4, reduction=2):
        super().__init__()
        self.k = kernel_size
        self.stride = stride
        self.groups = channels // group_channels
        self.reduce = nn.Sequential(nn.Conv2d(channels, channels // reduction, 1),
                                    nn.BatchNorm2d(channels // reduction), nn.ReLU())
        self.span = nn.Conv2d(channels // reduction, kernel_size ** 2 * self.groups, 1)
        self.pool = nn.AvgPool2d(stride, stride) if stride > 1 else nn.Identity()

    def forward(self, x):
        weight = self.span(self.reduce(self.pool(x)))
        b, c, h, w = weight.shape
        weight = weight.view(b, self.groups, self.k ** 2, h, w).unsqueeze(2)
        unfolded = F.unfold(x, self.k, 1, (self.k - 1) // 2, self.stride)
        unfolded = unfolded.view(b, self.groups, x.shape[1] // self.groups, self.k ** 2, h, w)
        return (weight * unfolded).sum(dim=3).view(b, x.shape[1], h, w)


def overlap_add(x, k=4, stride=2):
    """Patches by unfold, back by fold, divided by the fold of ones (overlap counts)."""
    B, C, H, W = x.shape
    cols = F.unfold(x, k, stride=stride)
    summed = F.fold(cols, (H, W), k, stride=stride)
    counts = F.fold(torch.ones_like(cols), (H, W), k, stride=stride)
    return summed / counts.clamp(min=1.0)


class UpsampleHead(nn.Module):
    def __init__(self, channels=8, classes=4):
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, padding=1)
        self.inv = Involution(channels)
        self.up = CARAFE(channels)
        self.cls = nn.Conv2d(channels, classes, 1)

    def forward(self, x):
        h = F.relu(self.stem(x))
        h = h + self.inv(h)
        h = overlap_add(h)
        h = self.up(h)
        return self.cls(h)


torch.manual_seed(0)
model = UpsampleHead().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randn(2, 3, 10, 12, generator=g)
