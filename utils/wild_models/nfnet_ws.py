"""An NFNet block as timm writes it: `ScaledStdConv2d(nn.Conv2d)` whose
forward standardises its own weight with `F.batch_norm` over the weight
reshaped to `(1, out_channels, -1)` (no running stats, `training=True`,
`momentum=0.`, the gain folded in as the affine weight, scaled by
`fan_in ** -0.5`) before `F.conv2d`; a `GammaAct` module with a constant
gain; the pre-activation residual scaled by `alpha` and divided by
`beta` from the expected variance, a skip-init gain `skipinit_gain`
parameter, and a `DownsampleAvg` shortcut with `AvgPool2d(ceil_mode=True,
count_include_pad=False)`."""
import torch
import torch.nn.functional as F
from torch import nn


class ScaledStdConv2d(nn.Conv2d):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=None,
                 dilation=1, groups=1, bias=True, gamma=1.0, eps=1e-6, gain_init=1.0):
        if padding is None:
            padding = ((stride - 1) + dilation * (kernel_size - 1)) // 2
        super().__init__(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                         dilation=dilation, groups=groups, bias=bias)
        self.gain = nn.Parameter(torch.full((self.out_channels, 1, 1, 1), gain_init))
        self.scale = gamma * self.weight[0].numel() ** -0.5
        self.eps = eps

    def forward(self, x):
        weight = F.batch_norm(
            self.weight.reshape(1, self.out_channels, -1), None, None,
            weight=(self.gain * self.scale).view(-1),
            training=True, momentum=0., eps=self.eps).reshape_as(self.weight)
        return F.conv2d(x, weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


_nonlin_gamma = dict(relu=1.7139588594436646, gelu=1.7015043497085571, silu=1.7881293296813965)


class GammaAct(nn.Module):
    def __init__(self, act_type="gelu", inplace=False):
        super().__init__()
        self.act_fn = {"gelu": F.gelu, "silu": F.silu, "relu": F.relu}[act_type]
        self.gamma = _nonlin_gamma[act_type]

    def forward(self, x):
        return self.act_fn(x).mul_(self.gamma)


class DownsampleAvg(nn.Module):
    def __init__(self, in_chs, out_chs, stride=1):
        super().__init__()
        if stride > 1:
            self.pool = nn.AvgPool2d(2, stride, ceil_mode=True, count_include_pad=False)
        else:
            self.pool = nn.Identity()
        self.conv = ScaledStdConv2d(in_chs, out_chs, 1, stride=1)

    def forward(self, x):
        return self.conv(self.pool(x))


class NormFreeBlock(nn.Module):
    def __init__(self, in_chs, out_chs, stride=1, alpha=0.2, beta=1.0, group_size=8):
        super().__init__()
        mid_chs = out_chs // 2
        groups = mid_chs // group_size
        self.alpha = alpha
        self.beta = beta
        self.downsample = DownsampleAvg(in_chs, out_chs, stride) if in_chs != out_chs or stride != 1 else None
        self.act1 = GammaAct("gelu")
        self.conv1 = ScaledStdConv2d(in_chs, mid_chs, 1)
        self.act2 = GammaAct("gelu", inplace=True)
        self.conv2 = ScaledStdConv2d(mid_chs, mid_chs, 3, stride=stride, groups=groups)
        self.act3 = GammaAct("gelu", inplace=True)
        self.conv3 = ScaledStdConv2d(mid_chs, out_chs, 1, gain_init=0.5)
        self.skipinit_gain = nn.Parameter(torch.tensor(0.7))

    def forward(self, x):
        out = self.act1(x) * self.beta
        shortcut = x
        if self.downsample is not None:
            shortcut = self.downsample(out)
        out = self.conv1(out)
        out = self.conv2(self.act2(out))
        out = self.conv3(self.act3(out))
        out = out.mul_(self.skipinit_gain)
        out = out * self.alpha + shortcut
        return out


class NFNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.stem = ScaledStdConv2d(3, 16, 3, stride=2)
        expected_var = 1.0
        blocks = []
        for in_chs, out_chs, stride in [(16, 32, 2), (32, 32, 1)]:
            beta = 1.0 / expected_var ** 0.5
            blocks.append(NormFreeBlock(in_chs, out_chs, stride, beta=beta))
            expected_var += 0.2 ** 2
        self.stages = nn.Sequential(*blocks)
        self.final_act = GammaAct("gelu")
        self.head = nn.Linear(32, num_classes)

    def forward(self, x):
        x = self.stem(x)
        x = self.stages(x)
        x = self.final_act(x)
        return self.head(x.mean((2, 3)))


torch.manual_seed(0)
model = NFNet().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.randn(2, 3, 16, 16, generator=g),)
