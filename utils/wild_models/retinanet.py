"""A RetinaNet head and inference in the style of detectron2 (and
torchvision's RetinaNet): an ImageList that pads a batch to a
size_divisibility with F.pad, a DefaultAnchorGenerator whose cell anchors
come from sizes and aspect ratios (math.sqrt, a BufferList of per-level
tensors) and are shifted over each level's grid (torch.meshgrid of
aranges times the stride, reshape, stack), a head of class and box
towers shared over the levels with the prior-probability bias init
(-math.log((1 - p) / p)), outputs permuted from (N, A*K, H, W) to
(N, HWA, K) by permute_to_N_HWA_K, a Box2BoxTransform decoding deltas
with weights and the scale clamp math.log(1000 / 16), and per-level
top-k candidates on sigmoid scores (flatten, topk, index by // and %),
concatenated over the levels."""
import math
from typing import List

import torch
import torch.nn as nn
import torch.nn.functional as F


class ImageList:
    def __init__(self, tensor, image_sizes):
        self.tensor = tensor
        self.image_sizes = image_sizes

    def __len__(self):
        return len(self.image_sizes)

    @staticmethod
    def from_tensors(tensors: List[torch.Tensor], size_divisibility: int = 0, pad_value: float = 0.0):
        image_sizes = [(im.shape[-2], im.shape[-1]) for im in tensors]
        image_sizes_tensor = [torch.as_tensor(x) for x in image_sizes]
        max_size = torch.stack(image_sizes_tensor).max(0).values
        if size_divisibility > 1:
            stride = size_divisibility
            max_size = (max_size + (stride - 1)).div(stride, rounding_mode="floor") * stride
        if len(tensors) == 1:
            image_size = image_sizes[0]
            padding_size = [0, max_size[-1] - image_size[1], 0, max_size[-2] - image_size[0]]
            batched_imgs = F.pad(tensors[0], padding_size, value=pad_value).unsqueeze_(0)
        else:
            batch_shape = [len(tensors)] + list(tensors[0].shape[:-2]) + list(max_size)
            batched_imgs = tensors[0].new_full(batch_shape, pad_value)
            for i, img in enumerate(tensors):
                batched_imgs[i, ..., : img.shape[-2], : img.shape[-1]].copy_(img)
        return ImageList(batched_imgs.contiguous(), image_sizes)


class BufferList(nn.Module):
    def __init__(self, buffers):
        super().__init__()
        for i, buffer in enumerate(buffers):
            self.register_buffer(str(i), buffer, persistent=False)

    def __len__(self):
        return len(self._buffers)

    def __iter__(self):
        return iter(self._buffers.values())


def _create_grid_offsets(size: List[int], stride: int, offset: float, target_device_tensor: torch.Tensor):
    grid_height, grid_width = size
    shifts_x = torch.arange(offset * stride, grid_width * stride, step=stride, dtype=torch.float32,
                            device=target_device_tensor.device)
    shifts_y = torch.arange(offset * stride, grid_height * stride, step=stride, dtype=torch.float32,
                            device=target_device_tensor.device)
    shift_y, shift_x = torch.meshgrid(shifts_y, shifts_x, indexing="ij")
    shift_x = shift_x.reshape(-1)
    shift_y = shift_y.reshape(-1)
    return shift_x, shift_y


class DefaultAnchorGenerator(nn.Module):
    box_dim: int = 4

    def __init__(self, sizes, aspect_ratios, strides, offset=0.0):
        super().__init__()
        self.strides = strides
        self.num_features = len(self.strides)
        self.offset = offset
        cell_anchors = [self.generate_cell_anchors(s, a) for s, a in zip(sizes, aspect_ratios)]
        self.cell_anchors = BufferList(cell_anchors)

    @property
    def num_anchors(self):
        return [len(cell_anchors) for cell_anchors in self.cell_anchors]

    def _grid_anchors(self, grid_sizes: List[List[int]]):
        anchors = []
        buffers: List[torch.Tensor] = [x[1] for x in self.cell_anchors.named_buffers()]
        for size, stride, base_anchors in zip(grid_sizes, self.strides, buffers):
            shift_x, shift_y = _create_grid_offsets(size, stride, self.offset, base_anchors)
            shifts = torch.stack((shift_x, shift_y, shift_x, shift_y), dim=1)
            anchors.append((shifts.view(-1, 1, 4) + base_anchors.view(1, -1, 4)).reshape(-1, 4))
        return anchors

    def generate_cell_anchors(self, sizes=(32, 64, 128, 256, 512), aspect_ratios=(0.5, 1, 2)):
        anchors = []
        for size in sizes:
            area = size ** 2.0
            for aspect_ratio in aspect_ratios:
                w = math.sqrt(area / aspect_ratio)
                h = aspect_ratio * w
                x0, y0, x1, y1 = -w / 2.0, -h / 2.0, w / 2.0, h / 2.0
                anchors.append([x0, y0, x1, y1])
        return torch.tensor(anchors)

    def forward(self, features: List[torch.Tensor]):
        grid_sizes = [feature_map.shape[-2:] for feature_map in features]
        return self._grid_anchors(grid_sizes)


_DEFAULT_SCALE_CLAMP = math.log(1000.0 / 16)


class Box2BoxTransform:
    def __init__(self, weights, scale_clamp=_DEFAULT_SCALE_CLAMP):
        self.weights = weights
        self.scale_clamp = scale_clamp

    def apply_deltas(self, deltas, boxes):
        deltas = deltas.float()
        boxes = boxes.to(deltas.dtype)
        widths = boxes[:, 2] - boxes[:, 0]
        heights = boxes[:, 3] - boxes[:, 1]
        ctr_x = boxes[:, 0] + 0.5 * widths
        ctr_y = boxes[:, 1] + 0.5 * heights
        wx, wy, ww, wh = self.weights
        dx = deltas[:, 0::4] / wx
        dy = deltas[:, 1::4] / wy
        dw = deltas[:, 2::4] / ww
        dh = deltas[:, 3::4] / wh
        dw = torch.clamp(dw, max=self.scale_clamp)
        dh = torch.clamp(dh, max=self.scale_clamp)
        pred_ctr_x = dx * widths[:, None] + ctr_x[:, None]
        pred_ctr_y = dy * heights[:, None] + ctr_y[:, None]
        pred_w = torch.exp(dw) * widths[:, None]
        pred_h = torch.exp(dh) * heights[:, None]
        x1 = pred_ctr_x - 0.5 * pred_w
        y1 = pred_ctr_y - 0.5 * pred_h
        x2 = pred_ctr_x + 0.5 * pred_w
        y2 = pred_ctr_y + 0.5 * pred_h
        pred_boxes = torch.stack((x1, y1, x2, y2), dim=-1)
        return pred_boxes.reshape(deltas.shape)


def permute_to_N_HWA_K(tensor, K: int):
    assert tensor.dim() == 4, tensor.shape
    N, _, H, W = tensor.shape
    tensor = tensor.view(N, -1, K, H, W)
    tensor = tensor.permute(0, 3, 4, 1, 2)
    tensor = tensor.reshape(N, -1, K)
    return tensor


class RetinaNetHead(nn.Module):
    def __init__(self, in_channels, num_anchors, num_classes, conv_dims=(32, 32), norm="GN",
                 prior_prob=0.01):
        super().__init__()
        self._num_classes = num_classes
        cls_subnet, bbox_subnet = [], []
        for in_ch, out_ch in zip([in_channels] + list(conv_dims), conv_dims):
            cls_subnet.append(nn.Conv2d(in_ch, out_ch, kernel_size=3, stride=1, padding=1))
            if norm == "GN":
                cls_subnet.append(nn.GroupNorm(8, out_ch))
            cls_subnet.append(nn.ReLU())
            bbox_subnet.append(nn.Conv2d(in_ch, out_ch, kernel_size=3, stride=1, padding=1))
            if norm == "GN":
                bbox_subnet.append(nn.GroupNorm(8, out_ch))
            bbox_subnet.append(nn.ReLU())
        self.cls_subnet = nn.Sequential(*cls_subnet)
        self.bbox_subnet = nn.Sequential(*bbox_subnet)
        self.cls_score = nn.Conv2d(conv_dims[-1], num_anchors * num_classes, kernel_size=3, stride=1, padding=1)
        self.bbox_pred = nn.Conv2d(conv_dims[-1], num_anchors * 4, kernel_size=3, stride=1, padding=1)
        for modules in [self.cls_subnet, self.bbox_subnet, self.cls_score, self.bbox_pred]:
            for layer in modules.modules():
                if isinstance(layer, nn.Conv2d):
                    torch.nn.init.normal_(layer.weight, mean=0, std=0.01)
                    torch.nn.init.constant_(layer.bias, 0)
        bias_value = -(math.log((1 - prior_prob) / prior_prob))
        torch.nn.init.constant_(self.cls_score.bias, bias_value)

    def forward(self, features: List[torch.Tensor]):
        logits = []
        bbox_reg = []
        for feature in features:
            logits.append(self.cls_score(self.cls_subnet(feature)))
            bbox_reg.append(self.bbox_pred(self.bbox_subnet(feature)))
        return logits, bbox_reg


class TinyBackboneFPN(nn.Module):
    def __init__(self, out_channels=32):
        super().__init__()
        self.c3 = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.ReLU(), nn.Conv2d(16, 24, 3, 2, 1), nn.ReLU(),
                                nn.Conv2d(24, 24, 3, 2, 1), nn.ReLU())
        self.c4 = nn.Sequential(nn.Conv2d(24, 32, 3, 2, 1), nn.ReLU())
        self.lat3 = nn.Conv2d(24, out_channels, 1)
        self.lat4 = nn.Conv2d(32, out_channels, 1)
        self.p5 = nn.Conv2d(out_channels, out_channels, 3, 2, 1)

    def forward(self, x):
        c3 = self.c3(x)
        c4 = self.c4(c3)
        p4 = self.lat4(c4)
        p3 = self.lat3(c3) + F.interpolate(p4, scale_factor=2.0, mode="nearest")
        p5 = self.p5(F.relu(p4))
        return {"p3": p3, "p4": p4, "p5": p5}


class RetinaNet(nn.Module):
    def __init__(self, num_classes=5, topk_candidates=20, size_divisibility=32):
        super().__init__()
        self.backbone = TinyBackboneFPN()
        self.head_in_features = ["p3", "p4", "p5"]
        self.anchor_generator = DefaultAnchorGenerator(
            sizes=[[x, x * 2 ** (1.0 / 3), x * 2 ** (2.0 / 3)] for x in [16, 32, 64]],
            aspect_ratios=[[0.5, 1.0, 2.0]] * 3, strides=[8, 16, 32])
        self.head = RetinaNetHead(32, self.anchor_generator.num_anchors[0], num_classes)
        self.box2box_transform = Box2BoxTransform(weights=(1.0, 1.0, 1.0, 1.0))
        self.num_classes = num_classes
        self.test_topk_candidates = topk_candidates
        self.size_divisibility = size_divisibility
        self.register_buffer("pixel_mean", torch.tensor([103.53, 116.28, 123.675]).view(-1, 1, 1), False)
        self.register_buffer("pixel_std", torch.tensor([57.375, 57.12, 58.395]).view(-1, 1, 1), False)

    @property
    def device(self):
        return self.pixel_mean.device

    def preprocess_image(self, batched_inputs):
        images = [x["image"].to(self.device) for x in batched_inputs]
        images = [(x - self.pixel_mean) / self.pixel_std for x in images]
        return ImageList.from_tensors(images, self.size_divisibility)

    def _decode_per_level(self, box_cls_i, box_delta_i, anchors_i):
        predicted_prob = box_cls_i.flatten().sigmoid_()
        num_topk = min(self.test_topk_candidates, predicted_prob.size(0))
        predicted_prob, topk_idxs = predicted_prob.topk(num_topk)
        anchor_idxs = topk_idxs // self.num_classes
        classes_idxs = topk_idxs % self.num_classes
        box_reg_i = box_delta_i[anchor_idxs]
        anchors_i = anchors_i[anchor_idxs]
        predicted_boxes = self.box2box_transform.apply_deltas(box_reg_i, anchors_i)
        return predicted_boxes, predicted_prob, classes_idxs

    def forward(self, batched_inputs):
        images = self.preprocess_image(batched_inputs)
        features = self.backbone(images.tensor)
        features = [features[f] for f in self.head_in_features]
        anchors = self.anchor_generator(features)
        pred_logits, pred_anchor_deltas = self.head(features)
        pred_logits = [permute_to_N_HWA_K(x, self.num_classes) for x in pred_logits]
        pred_anchor_deltas = [permute_to_N_HWA_K(x, 4) for x in pred_anchor_deltas]
        results = []
        for img_idx, image_size in enumerate(images.image_sizes):
            boxes_all, scores_all, class_idxs_all = [], [], []
            for box_cls_i, box_reg_i, anchors_i in zip(pred_logits, pred_anchor_deltas, anchors):
                b, s, c = self._decode_per_level(box_cls_i[img_idx], box_reg_i[img_idx], anchors_i)
                boxes_all.append(b)
                scores_all.append(s)
                class_idxs_all.append(c)
            boxes = torch.cat(boxes_all)
            boxes[:, 0::2] = boxes[:, 0::2].clamp(min=0, max=image_size[1])
            boxes[:, 1::2] = boxes[:, 1::2].clamp(min=0, max=image_size[0])
            results.append({"pred_boxes": boxes, "scores": torch.cat(scores_all),
                            "pred_classes": torch.cat(class_idxs_all)})
        return results


torch.manual_seed(0)
model = RetinaNet().eval()
with torch.no_grad():
    for m in model.head.modules():
        if isinstance(m, nn.Conv2d):
            m.weight.normal_(0, 0.1)


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return ([{"image": torch.rand(3, 60, 64, generator=g) * 255.0},
             {"image": torch.rand(3, 64, 50, generator=g) * 255.0}],)
