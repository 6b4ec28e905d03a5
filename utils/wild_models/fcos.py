"""An FCOS head as the reference (tianzhi0549/FCOS, maskrcnn-benchmark
style) writes it: a learnable per-level Scale module (a one-element
parameter), class and box towers of conv + GroupNorm(32) + ReLU built
with add_module in a loop, a centerness branch on the regression tower,
box regression as exp(scale(x)) or, with norm_reg_targets, relu(scale(x))
times the stride (outside training), locations per level from
compute_locations_per_level (meshgrid of aranges times the stride plus
stride // 2), and inference that scores classes by sqrt(sigmoid(cls) *
sigmoid(centerness)) and decodes left/top/right/bottom distances against
the locations. A deformable 3x3 sampling of the box tower (offsets
predicted by a conv and applied through F.grid_sample, the way DCN
fallbacks without compiled ops are written) feeds the regression branch."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Scale(nn.Module):
    def __init__(self, init_value=1.0):
        super().__init__()
        self.scale = nn.Parameter(torch.FloatTensor([init_value]))

    def forward(self, input):
        return input * self.scale


class DeformSample3x3(nn.Module):
    """A 3x3 deformable conv written with grid_sample: each of the nine taps
    is sampled at its regular position plus a predicted offset."""

    def __init__(self, channels, out_channels):
        super().__init__()
        self.offset = nn.Conv2d(channels, 18, 3, padding=1)
        nn.init.normal_(self.offset.weight, std=0.01)
        nn.init.constant_(self.offset.bias, 0.0)
        self.weight = nn.Parameter(torch.randn(out_channels, channels * 9) * 0.05)
        self.bias = nn.Parameter(torch.zeros(out_channels))

    def forward(self, x):
        n, c, h, w = x.shape
        offset = self.offset(x).view(n, 9, 2, h, w)
        ys, xs = torch.meshgrid(torch.arange(h, dtype=x.dtype, device=x.device),
                                torch.arange(w, dtype=x.dtype, device=x.device), indexing="ij")
        taps = []
        k = 0
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                py = ys + dy + offset[:, k, 0]
                px = xs + dx + offset[:, k, 1]
                grid = torch.stack((2.0 * px / max(w - 1, 1) - 1.0, 2.0 * py / max(h - 1, 1) - 1.0), dim=-1)
                taps.append(F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=True))
                k += 1
        cols = torch.stack(taps, dim=2).view(n, c * 9, h * w)
        out = torch.einsum("ok,nkl->nol", self.weight, cols) + self.bias[None, :, None]
        return out.view(n, -1, h, w)


class FCOSHead(nn.Module):
    def __init__(self, in_channels, num_classes=4, num_convs=2, prior_prob=0.01, fpn_strides=(8, 16, 32),
                 norm_reg_targets=True, centerness_on_reg=True, use_dcn_in_tower=True):
        super().__init__()
        self.num_classes = num_classes - 1
        self.fpn_strides = fpn_strides
        self.norm_reg_targets = norm_reg_targets
        self.centerness_on_reg = centerness_on_reg
        cls_tower, bbox_tower = [], []
        for i in range(num_convs):
            cls_tower.append(nn.Conv2d(in_channels, in_channels, kernel_size=3, stride=1, padding=1, bias=True))
            cls_tower.append(nn.GroupNorm(8, in_channels))
            cls_tower.append(nn.ReLU())
            bbox_tower.append(nn.Conv2d(in_channels, in_channels, kernel_size=3, stride=1, padding=1, bias=True))
            bbox_tower.append(nn.GroupNorm(8, in_channels))
            bbox_tower.append(nn.ReLU())
        self.add_module("cls_tower", nn.Sequential(*cls_tower))
        self.add_module("bbox_tower", nn.Sequential(*bbox_tower))
        self.dcn = DeformSample3x3(in_channels, in_channels) if use_dcn_in_tower else None
        self.cls_logits = nn.Conv2d(in_channels, self.num_classes, kernel_size=3, stride=1, padding=1)
        self.bbox_pred = nn.Conv2d(in_channels, 4, kernel_size=3, stride=1, padding=1)
        self.centerness = nn.Conv2d(in_channels, 1, kernel_size=3, stride=1, padding=1)
        for modules in [self.cls_tower, self.bbox_tower, self.cls_logits, self.bbox_pred, self.centerness]:
            for l in modules.modules():
                if isinstance(l, nn.Conv2d):
                    torch.nn.init.normal_(l.weight, std=0.05)
                    torch.nn.init.constant_(l.bias, 0)
        bias_value = -math.log((1 - prior_prob) / prior_prob)
        torch.nn.init.constant_(self.cls_logits.bias, bias_value)
        self.scales = nn.ModuleList([Scale(init_value=1.0) for _ in range(len(fpn_strides))])

    def forward(self, x):
        logits, bbox_reg, centerness = [], [], []
        for l, feature in enumerate(x):
            cls_tower = self.cls_tower(feature)
            box_tower = self.bbox_tower(feature)
            if self.dcn is not None:
                box_tower = F.relu(self.dcn(box_tower))
            logits.append(self.cls_logits(cls_tower))
            if self.centerness_on_reg:
                centerness.append(self.centerness(box_tower))
            else:
                centerness.append(self.centerness(cls_tower))
            bbox_pred = self.scales[l](self.bbox_pred(box_tower))
            if self.norm_reg_targets:
                bbox_pred = F.relu(bbox_pred)
                if self.training:
                    bbox_reg.append(bbox_pred)
                else:
                    bbox_reg.append(bbox_pred * self.fpn_strides[l])
            else:
                bbox_reg.append(torch.exp(bbox_pred))
        return logits, bbox_reg, centerness


def compute_locations_per_level(h, w, stride, device):
    shifts_x = torch.arange(0, w * stride, step=stride, dtype=torch.float32, device=device)
    shifts_y = torch.arange(0, h * stride, step=stride, dtype=torch.float32, device=device)
    shift_y, shift_x = torch.meshgrid(shifts_y, shifts_x, indexing="ij")
    shift_x = shift_x.reshape(-1)
    shift_y = shift_y.reshape(-1)
    locations = torch.stack((shift_x, shift_y), dim=1) + stride // 2
    return locations


class FCOS(nn.Module):
    def __init__(self, channels=32, pre_nms_top_n=30):
        super().__init__()
        self.body = nn.ModuleList([
            nn.Sequential(nn.Conv2d(3, channels, 3, 4, 1), nn.ReLU(), nn.Conv2d(channels, channels, 3, 2, 1)),
            nn.Sequential(nn.ReLU(), nn.Conv2d(channels, channels, 3, 2, 1)),
            nn.Sequential(nn.ReLU(), nn.Conv2d(channels, channels, 3, 2, 1))])
        self.head = FCOSHead(channels)
        self.fpn_strides = [8, 16, 32]
        self.pre_nms_top_n = pre_nms_top_n

    def compute_locations(self, features):
        locations = []
        for level, feature in enumerate(features):
            h, w = feature.size()[-2:]
            locations.append(compute_locations_per_level(h, w, self.fpn_strides[level], feature.device))
        return locations

    def forward_for_single_feature_map(self, locations, box_cls, box_regression, centerness, image_size):
        N, C, H, W = box_cls.shape
        box_cls = box_cls.view(N, C, H, W).permute(0, 2, 3, 1)
        box_cls = box_cls.reshape(N, -1, C).sigmoid()
        box_regression = box_regression.view(N, 4, H, W).permute(0, 2, 3, 1)
        box_regression = box_regression.reshape(N, -1, 4)
        centerness = centerness.view(N, 1, H, W).permute(0, 2, 3, 1)
        centerness = centerness.reshape(N, -1).sigmoid()
        box_cls = box_cls * centerness[:, :, None]
        results = []
        for i in range(N):
            scores, idx = box_cls[i].flatten().topk(min(self.pre_nms_top_n, H * W * C))
            per_box_loc = idx // C
            per_class = idx % C + 1
            per_box_regression = box_regression[i][per_box_loc]
            per_locations = locations[per_box_loc]
            detections = torch.stack([
                per_locations[:, 0] - per_box_regression[:, 0],
                per_locations[:, 1] - per_box_regression[:, 1],
                per_locations[:, 0] + per_box_regression[:, 2],
                per_locations[:, 1] + per_box_regression[:, 3]], dim=1)
            h, w = image_size
            detections = torch.stack([detections[:, 0].clamp(min=0, max=w - 1),
                                      detections[:, 1].clamp(min=0, max=h - 1),
                                      detections[:, 2].clamp(min=0, max=w - 1),
                                      detections[:, 3].clamp(min=0, max=h - 1)], dim=1)
            results.append((detections, torch.sqrt(scores), per_class))
        return results

    def forward(self, images):
        features = []
        x = images
        for stage in self.body:
            x = stage(x)
            features.append(x)
        box_cls, box_regression, centerness = self.head(features)
        locations = self.compute_locations(features)
        sampled = []
        for l, o, b, c in zip(locations, box_cls, box_regression, centerness):
            sampled.append(self.forward_for_single_feature_map(l, o, b, c, images.shape[-2:]))
        boxlists = list(zip(*sampled))
        out = []
        for per_image in boxlists:
            out.append({"boxes": torch.cat([p[0] for p in per_image]),
                        "scores": torch.cat([p[1] for p in per_image]),
                        "labels": torch.cat([p[2] for p in per_image])})
        return out, box_cls, box_regression, centerness


torch.manual_seed(0)
model = FCOS().eval()
check_gradients = True


def example_inputs():
    return torch.randn(2, 3, 64, 64, generator=torch.Generator().manual_seed(1))
