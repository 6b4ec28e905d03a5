"""An EfficientDet BiFPN layer as its ports write it: fast normalized
fusion with ReLU'd learnable weights divided by their sum plus epsilon,
top-down nearest upsampling with F.interpolate(scale_factor=2), bottom-up
max_pool2d downsampling, depthwise separable convs with BatchNorm and
swish (x * sigmoid(x)), over a list of feature maps of several levels."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SeparableConv(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.depthwise = nn.Conv2d(channels, channels, 3, padding=1, groups=channels, bias=False)
        self.pointwise = nn.Conv2d(channels, channels, 1)
        self.bn = nn.BatchNorm2d(channels, momentum=0.01, eps=1e-3)

    def forward(self, x):
        return self.bn(self.pointwise(self.depthwise(x)))


class BiFPN(nn.Module):
    def __init__(self, channels=8, levels=3, epsilon=1e-4):
        super().__init__()
        self.epsilon, self.levels = epsilon, levels
        self.up_convs = nn.ModuleList([SeparableConv(channels) for _ in range(levels - 1)])
        self.down_convs = nn.ModuleList([SeparableConv(channels) for _ in range(levels - 1)])
        self.w_up = nn.Parameter(torch.ones(levels - 1, 2))
        self.w_down = nn.Parameter(torch.ones(levels - 1, 3))

    @staticmethod
    def swish(x):
        return x * torch.sigmoid(x)

    def forward(self, inputs):
        w_up = F.relu(self.w_up)
        w_up = w_up / (torch.sum(w_up, dim=1, keepdim=True) + self.epsilon)
        td = [inputs[-1]]
        for i in range(self.levels - 2, -1, -1):
            w = w_up[i]
            up = F.interpolate(td[-1], scale_factor=2, mode="nearest")
            td.append(self.up_convs[i](self.swish(w[0] * inputs[i] + w[1] * up)))
        td = td[::-1]
        w_down = F.relu(self.w_down)
        w_down = w_down / (torch.sum(w_down, dim=1, keepdim=True) + self.epsilon)
        outs = [td[0]]
        for i in range(1, self.levels):
            w = w_down[i - 1]
            down = F.max_pool2d(outs[-1], kernel_size=3, stride=2, padding=1)
            extra = td[i] if i < self.levels - 1 else torch.zeros_like(down)
            outs.append(self.down_convs[i - 1](self.swish(w[0] * inputs[i] + w[1] * down + w[2] * extra)))
        return outs


torch.manual_seed(0)
model = BiFPN().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return ([torch.randn(2, 8, 16, 16, generator=g), torch.randn(2, 8, 8, 8, generator=g),
             torch.randn(2, 8, 4, 4, generator=g)],)
