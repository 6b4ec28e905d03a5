"""An end-to-end detector wrapper as deployment code writes it (YOLOv5's
`AutoShape`, Ultralytics' `LetterBox`, exporters' "include pre- and
post-processing" models): a uint8 HWC image batch as the input, `permute`
to NCHW and `.float().div_(255)`, the letterbox scale from
`min(new / h, new / w)` on the input's shape, an anti-aliased bilinear
resize (`F.interpolate(antialias=True)`) to `round(h * r)`, padding split
in two halves by `F.pad(value=114 / 255)`, ImageNet mean/std buffers
applied by `sub_`/`div_`, a tiny anchor-free head decoded over a
`meshgrid`, `torch.onnx.is_in_onnx_export()` and `torch.jit.is_tracing()`
branches, boxes mapped back by subtracting the pad and dividing by the
ratio, `clamp_` to the original image, and a fixed-size top-k output."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyHead(nn.Module):
    def __init__(self, classes=3, stride=8):
        super().__init__()
        self.stride = stride
        self.body = nn.Sequential(
            nn.Conv2d(3, 16, 3, 2, 1), nn.SiLU(), nn.Conv2d(16, 32, 3, 2, 1), nn.SiLU(),
            nn.Conv2d(32, 32, 3, 2, 1), nn.SiLU())
        self.box = nn.Conv2d(32, 4, 1)
        self.obj = nn.Conv2d(32, classes, 1)

    def forward(self, x):
        f = self.body(x)
        return self.box(f), self.obj(f)


class LetterboxDetector(nn.Module):
    def __init__(self, size=64, max_det=10):
        super().__init__()
        self.size, self.max_det = size, max_det
        self.head = TinyHead()
        self.register_buffer("mean", torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1))

    def letterbox(self, x):
        h, w = x.shape[-2:]
        r = min(self.size / h, self.size / w)
        nh, nw = int(round(h * r)), int(round(w * r))
        if (nh, nw) != (h, w):
            x = F.interpolate(x, size=(nh, nw), mode="bilinear", align_corners=False, antialias=True)
        dh, dw = (self.size - nh) / 2, (self.size - nw) / 2
        top, bottom = int(round(dh - 0.1)), int(round(dh + 0.1))
        left, right = int(round(dw - 0.1)), int(round(dw + 0.1))
        x = F.pad(x, (left, right, top, bottom), value=114 / 255)
        return x, r, (left, top)

    def decode(self, box, obj):
        b, _, ny, nx = box.shape
        yv, xv = torch.meshgrid(torch.arange(ny, device=box.device), torch.arange(nx, device=box.device),
                                indexing="ij")
        grid = torch.stack((xv, yv), 0).to(box.dtype).view(1, 2, ny, nx)
        stride = self.size / ny
        xy = (box[:, :2].sigmoid() * 2 - 0.5 + grid) * stride
        wh = box[:, 2:].exp().clamp(max=8.0) * stride
        boxes = torch.cat((xy - wh / 2, xy + wh / 2), 1).flatten(2).transpose(1, 2)
        scores, labels = obj.sigmoid().flatten(2).transpose(1, 2).max(-1)
        return boxes, scores, labels

    def forward(self, images):
        h0, w0 = images.shape[1:3]
        x = images.permute(0, 3, 1, 2).float().div_(255)
        x, r, (padw, padh) = self.letterbox(x)
        x = x.sub_(self.mean).div_(self.std)
        box, obj = self.head(x)
        boxes, scores, labels = self.decode(box, obj)
        if torch.onnx.is_in_onnx_export() or torch.jit.is_tracing():
            return boxes, scores, labels  # exporters do the rest in the runtime
        boxes = boxes - boxes.new_tensor([padw, padh, padw, padh])
        boxes = boxes / r
        boxes[..., 0::2].clamp_(0, w0)
        boxes[..., 1::2].clamp_(0, h0)
        k = min(self.max_det, scores.shape[1])
        top, idx = scores.topk(k, dim=1)
        keep = torch.gather(boxes, 1, idx.unsqueeze(-1).expand(-1, -1, 4))
        return keep, top, torch.gather(labels, 1, idx)


torch.manual_seed(0)
model = LetterboxDetector().eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randint(0, 256, (2, 90, 120, 3), dtype=torch.uint8, generator=g)
