"""Barlow Twins as facebookresearch/barlowtwins' `main.py` writes it: the
options in an `argparse.Namespace` (`args.projector` a string like
"64-64-64" turned into sizes by `list(map(int, ...split('-')))`,
`args.batch_size`, `args.lambd`), a backbone whose `fc` is replaced by
`nn.Identity()`, the projector built as a list of Linear/BatchNorm1d/ReLU
layers, a final `BatchNorm1d(affine=False)`, the empirical
cross-correlation `self.bn(z1).T @ self.bn(z2)` divided in place by the
batch size with `torch.distributed.all_reduce` only when a process group
is initialized, `torch.diagonal(c).add_(-1).pow_(2).sum()` on the
diagonal and the `off_diagonal` view trick (`flatten()[:-1].view(n - 1,
n + 1)[:, 1:].flatten()`)."""
import argparse

import torch
import torch.nn as nn


def off_diagonal(x):
    n, m = x.shape
    assert n == m
    return x.flatten()[:-1].view(n - 1, n + 1)[:, 1:].flatten()


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class TinyResNet(nn.Module):
    def __init__(self, widths=(16, 32), num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, widths[0], 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(widths[0])
        self.relu = nn.ReLU(inplace=True)
        layers, inplanes = [], widths[0]
        for i, w in enumerate(widths):
            stride = 1 if i == 0 else 2
            down = None
            if stride != 1 or inplanes != w:
                down = nn.Sequential(nn.Conv2d(inplanes, w, 1, stride, bias=False), nn.BatchNorm2d(w))
            layers.append(BasicBlock(inplanes, w, stride, down))
            inplanes = w
        self.layers = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(inplanes, num_classes)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layers(x)
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


class BarlowTwins(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.backbone = TinyResNet()
        self.backbone.fc = nn.Identity()
        sizes = [32] + list(map(int, args.projector.split("-")))
        layers = []
        for i in range(len(sizes) - 2):
            layers.append(nn.Linear(sizes[i], sizes[i + 1], bias=False))
            layers.append(nn.BatchNorm1d(sizes[i + 1]))
            layers.append(nn.ReLU(inplace=True))
        layers.append(nn.Linear(sizes[-2], sizes[-1], bias=False))
        self.projector = nn.Sequential(*layers)
        self.bn = nn.BatchNorm1d(sizes[-1], affine=False)

    def forward(self, y1, y2):
        z1 = self.projector(self.backbone(y1))
        z2 = self.projector(self.backbone(y2))
        c = self.bn(z1).T @ self.bn(z2)
        c.div_(self.args.batch_size)
        if torch.distributed.is_available() and torch.distributed.is_initialized():
            torch.distributed.all_reduce(c)
        on_diag = torch.diagonal(c).add_(-1).pow_(2).sum()
        off_diag = off_diagonal(c).pow_(2).sum()
        loss = on_diag + self.args.lambd * off_diag
        return loss


args = argparse.Namespace(projector="64-64-32", batch_size=6, lambd=0.0051)
torch.manual_seed(0)
model = BarlowTwins(args)
with torch.no_grad():
    for _m in model.modules():
        if isinstance(_m, nn.modules.batchnorm._BatchNorm):
            _m.running_mean.normal_(0, 0.1)
            _m.running_var.uniform_(0.5, 1.5)
model.eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    x = torch.rand(6, 3, 16, 16, generator=g)
    y1 = (x + 0.1 * torch.randn(6, 3, 16, 16, generator=g)).clamp(0, 1)
    y2 = torch.flip(x, dims=[3]) * 0.9
    return y1, y2
