"""A YOLO-style detection head as in the YOLOv5 code: per-scale 1x1 convs,
outputs viewed as (batch, anchors, outputs, ny, nx) and permuted, grids
built from torch.meshgrid over aranges and cached on the module (rebuilt
when a scale's size changes), sigmoid decoding of centres and sizes against
strides and anchors, and detections concatenated over scales."""
import torch
import torch.nn as nn


class Conv(nn.Module):
    def __init__(self, c1, c2, k=1, s=1):
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, k // 2, bias=False)
        self.bn = nn.BatchNorm2d(c2)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Detect(nn.Module):
    stride = None

    def __init__(self, nc=4, anchors=(), ch=()):
        super().__init__()
        self.nc = nc
        self.no = nc + 5
        self.nl = len(anchors)
        self.na = len(anchors[0]) // 2
        self.grid = [torch.empty(0) for _ in range(self.nl)]
        self.anchor_grid = [torch.empty(0) for _ in range(self.nl)]
        self.register_buffer("anchors", torch.tensor(anchors).float().view(self.nl, -1, 2))
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)

    def forward(self, x):
        z = []
        for i in range(self.nl):
            x[i] = self.m[i](x[i])
            bs, _, ny, nx = x[i].shape
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
            if not self.training:
                if self.grid[i].shape[2:4] != x[i].shape[2:4]:
                    self.grid[i], self.anchor_grid[i] = self._make_grid(nx, ny, i)
                xy, wh, conf = x[i].sigmoid().split((2, 2, self.nc + 1), 4)
                xy = (xy * 2 + self.grid[i]) * self.stride[i]
                wh = (wh * 2) ** 2 * self.anchor_grid[i]
                y = torch.cat((xy, wh, conf), 4)
                z.append(y.view(bs, self.na * nx * ny, self.no))
        return x if self.training else (torch.cat(z, 1), x)

    def _make_grid(self, nx=20, ny=20, i=0):
        d = self.anchors[i].device
        t = self.anchors[i].dtype
        shape = 1, self.na, ny, nx, 2
        y, x = torch.arange(ny, device=d, dtype=t), torch.arange(nx, device=d, dtype=t)
        yv, xv = torch.meshgrid(y, x, indexing="ij")
        grid = torch.stack((xv, yv), 2).expand(shape) - 0.5
        anchor_grid = (self.anchors[i] * self.stride[i]).view((1, self.na, 1, 1, 2)).expand(shape)
        return grid, anchor_grid


class TinyDetector(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = Conv(3, 8, 3, 2)
        self.c3 = Conv(8, 16, 3, 2)
        self.c4 = Conv(16, 24, 3, 2)
        self.c5 = Conv(24, 32, 3, 2)
        anchors = ((10, 13, 16, 30, 33, 23), (30, 61, 62, 45, 59, 119), (116, 90, 156, 198, 373, 326))
        self.detect = Detect(nc=4, anchors=anchors, ch=(16, 24, 32))
        self.detect.stride = torch.tensor([4.0, 8.0, 16.0])
        self.detect.anchors /= self.detect.stride.view(-1, 1, 1)

    def forward(self, x):
        p3 = self.c3(self.stem(x))
        p4 = self.c4(p3)
        p5 = self.c5(p4)
        return self.detect([p3, p4, p5])


torch.manual_seed(0)
model = TinyDetector().eval()


def example_inputs():
    return torch.randn(1, 3, 64, 48, generator=torch.Generator().manual_seed(1))
