"""Box-head ROI pooling written with plain torch ops, as detection repos do
when they cannot build torchvision's kernels (detectron2's `ROIAlign`
semantics: `aligned=True` half-pixel shift, `sampling_ratio` samples per
bin averaged): boxes given as an `[K, 5]` tensor of `(batch_index, x0, y0,
x1, y1)`, the level chosen per box by the FPN `log2(sqrt(area) / 224)`
heuristic and `clamp`, each box's sample grid built from `arange` and
broadcasting, bilinear interpolation by `floor`, `clamp`, flat indices and
`gather` on the flattened feature map, weights zeroed outside the image by
a boolean mask, per-level results written into one output by index
assignment with `nonzero` indices, then a two-layer box head with class
and box-delta outputs."""
import math

import torch
import torch.nn.functional as F
from torch import nn


def bilinear_gather(feature, ys, xs):
    """feature [C, H, W]; ys, xs [...] float coordinates -> [C, ...]."""
    C, H, W = feature.shape
    valid = (ys > -1.0) & (ys < H) & (xs > -1.0) & (xs < W)
    y = ys.clamp(min=0)
    x = xs.clamp(min=0)
    y0 = y.floor().long().clamp(max=H - 1)
    x0 = x.floor().long().clamp(max=W - 1)
    y1 = (y0 + 1).clamp(max=H - 1)
    x1 = (x0 + 1).clamp(max=W - 1)
    y = torch.where(y0 >= H - 1, y0.to(y.dtype), y)
    x = torch.where(x0 >= W - 1, x0.to(x.dtype), x)
    ly = y - y0
    lx = x - x0
    hy = 1.0 - ly
    hx = 1.0 - lx
    flat = feature.reshape(C, H * W)

    def tap(yi, xi):
        idx = (yi * W + xi).reshape(1, -1).expand(C, -1)
        return flat.gather(1, idx).reshape((C,) + tuple(ys.shape))

    out = (hy * hx) * tap(y0, x0) + (hy * lx) * tap(y0, x1) + (ly * hx) * tap(y1, x0) + (ly * lx) * tap(y1, x1)
    return out * valid.to(out.dtype)


def roi_align(features, rois, output_size, spatial_scale, sampling_ratio=2, aligned=True):
    """features [N, C, H, W], rois [K, 5] -> [K, C, out, out]."""
    offset = 0.5 if aligned else 0.0
    outs = []
    for k in range(rois.shape[0]):
        b = int(rois[k, 0])
        x0 = rois[k, 1] * spatial_scale - offset
        y0 = rois[k, 2] * spatial_scale - offset
        x1 = rois[k, 3] * spatial_scale - offset
        y1 = rois[k, 4] * spatial_scale - offset
        roi_w = x1 - x0
        roi_h = y1 - y0
        if not aligned:
            roi_w = roi_w.clamp(min=1.0)
            roi_h = roi_h.clamp(min=1.0)
        bin_w = roi_w / output_size
        bin_h = roi_h / output_size
        grid = torch.arange(output_size, dtype=features.dtype, device=features.device)
        sub = (torch.arange(sampling_ratio, dtype=features.dtype, device=features.device) + 0.5) / sampling_ratio
        ys = y0 + (grid[:, None] + sub[None, :]) * bin_h  # [out, s]
        xs = x0 + (grid[:, None] + sub[None, :]) * bin_w
        yy = ys.reshape(output_size, sampling_ratio, 1, 1).expand(-1, -1, output_size, sampling_ratio)
        xx = xs.reshape(1, 1, output_size, sampling_ratio).expand(output_size, sampling_ratio, -1, -1)
        vals = bilinear_gather(features[b], yy, xx)  # [C, out, s, out, s]
        outs.append(vals.mean(dim=(2, 4)))
    return torch.stack(outs)


def assign_boxes_to_levels(rois, min_level, max_level, canonical_box_size=224, canonical_level=4):
    w = rois[:, 3] - rois[:, 1]
    h = rois[:, 4] - rois[:, 2]
    box_sizes = torch.sqrt(w * h)
    level = torch.floor(canonical_level + torch.log2(box_sizes / canonical_box_size + 1e-8))
    level = torch.clamp(level, min=min_level, max=max_level)
    return level.to(torch.int64) - min_level


class ROIPooler(nn.Module):
    def __init__(self, output_size, scales, sampling_ratio=2):
        super().__init__()
        self.output_size = output_size
        self.scales = scales
        self.sampling_ratio = sampling_ratio
        self.min_level = int(-math.log2(scales[0]))
        self.max_level = int(-math.log2(scales[-1]))

    def forward(self, x, rois):
        if len(self.scales) == 1:
            return roi_align(x[0], rois, self.output_size, self.scales[0], self.sampling_ratio)
        level_assignments = assign_boxes_to_levels(rois, self.min_level, self.max_level)
        C = x[0].shape[1]
        output = x[0].new_zeros((rois.shape[0], C, self.output_size, self.output_size))
        for level, scale in enumerate(self.scales):
            inds = torch.nonzero(level_assignments == level, as_tuple=True)[0]
            if inds.numel() == 0:
                continue
            output[inds] = roi_align(x[level], rois[inds], self.output_size, scale, self.sampling_ratio)
        return output


class FastRCNNBoxHead(nn.Module):
    def __init__(self, channels=8, pooler=4, hidden=32, num_classes=5):
        super().__init__()
        self.pooler = ROIPooler(pooler, (1.0 / 4, 1.0 / 8))
        self.fc1 = nn.Linear(channels * pooler * pooler, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.cls_score = nn.Linear(hidden, num_classes + 1)
        self.bbox_pred = nn.Linear(hidden, num_classes * 4)

    def forward(self, p2, p3, rois):
        box_features = self.pooler([p2, p3], rois)
        h = torch.flatten(box_features, 1)
        h = F.relu(self.fc1(h))
        h = F.relu(self.fc2(h))
        scores = self.cls_score(h)
        deltas = self.bbox_pred(h)
        return F.softmax(scores, dim=-1), deltas, box_features


torch.manual_seed(0)
model = FastRCNNBoxHead().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    p2 = torch.randn(2, 8, 16, 16, generator=g)
    p3 = torch.randn(2, 8, 8, 8, generator=g)
    rois = torch.tensor([
        [0.0, 2.0, 3.0, 30.0, 40.0],
        [1.0, 10.0, 5.0, 22.0, 19.0],
        [0.0, 0.0, 0.0, 63.0, 63.0],
        [1.0, 40.0, 33.5, 61.0, 60.0],
        [0.0, 17.0, 9.0, 25.5, 50.0],
    ])
    return p2, p3, rois
