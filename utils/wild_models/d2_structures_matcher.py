"""Label assignment for an anchor-based head on detectron2's data
structures, paraphrased: a `Boxes` class wrapping an (N, 4) tensor with
`__getitem__` (int, slice or mask), `__len__`, `area`, `clip`, `nonempty`,
`scale`, `cat` as a classmethod and `__iter__`; `Instances` keeping
`_image_size` and a `_fields` dict behind `__setattr__`/`__getattr__`
overrides, `set`/`get`/`has`, and `__getitem__` indexing every field;
`pairwise_iou` by broadcast min/max with `torch.where` against zero union;
the `Matcher` (thresholds with -inf/+inf sentinels, labels per interval
by a zip loop of `low <= matched_vals < high` masks, and
`set_low_quality_matches_` by `nonzero` of the per-gt max); the
`Box2BoxTransform` encode with weights and a `scale_clamp` on decode; a
per-image loop over a list of Instances computing smooth-L1 box
regression and sigmoid classification losses normalised by the number of
foreground anchors."""
import math
from typing import Any, Dict, List, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


class Boxes:
    def __init__(self, tensor: torch.Tensor):
        if not isinstance(tensor, torch.Tensor):
            tensor = torch.as_tensor(tensor, dtype=torch.float32)
        if tensor.numel() == 0:
            tensor = tensor.reshape((-1, 4)).to(dtype=torch.float32)
        assert tensor.dim() == 2 and tensor.size(-1) == 4, tensor.size()
        self.tensor = tensor

    def clone(self):
        return Boxes(self.tensor.clone())

    def area(self):
        box = self.tensor
        return (box[:, 2] - box[:, 0]) * (box[:, 3] - box[:, 1])

    def clip(self, box_size: Tuple[int, int]) -> None:
        h, w = box_size
        x1 = self.tensor[:, 0].clamp(min=0, max=w)
        y1 = self.tensor[:, 1].clamp(min=0, max=h)
        x2 = self.tensor[:, 2].clamp(min=0, max=w)
        y2 = self.tensor[:, 3].clamp(min=0, max=h)
        self.tensor = torch.stack((x1, y1, x2, y2), dim=-1)

    def nonempty(self, threshold: float = 0.0):
        box = self.tensor
        widths = box[:, 2] - box[:, 0]
        heights = box[:, 3] - box[:, 1]
        return (widths > threshold) & (heights > threshold)

    def scale(self, scale_x: float, scale_y: float) -> None:
        self.tensor[:, 0::2] *= scale_x
        self.tensor[:, 1::2] *= scale_y

    def __getitem__(self, item):
        if isinstance(item, int):
            return Boxes(self.tensor[item].view(1, -1))
        b = self.tensor[item]
        assert b.dim() == 2, "Indexing on Boxes with {} failed to return a matrix!".format(item)
        return Boxes(b)

    def __len__(self) -> int:
        return self.tensor.shape[0]

    def __iter__(self):
        yield from self.tensor

    @classmethod
    def cat(cls, boxes_list):
        assert isinstance(boxes_list, (list, tuple))
        if len(boxes_list) == 0:
            return cls(torch.empty(0))
        assert all([isinstance(box, Boxes) for box in boxes_list])
        return cls(torch.cat([b.tensor for b in boxes_list], dim=0))


class Instances:
    def __init__(self, image_size: Tuple[int, int], **kwargs: Any):
        self._image_size = image_size
        self._fields: Dict[str, Any] = {}
        for k, v in kwargs.items():
            self.set(k, v)

    @property
    def image_size(self) -> Tuple[int, int]:
        return self._image_size

    def __setattr__(self, name: str, val: Any) -> None:
        if name.startswith("_"):
            super().__setattr__(name, val)
        else:
            self.set(name, val)

    def __getattr__(self, name: str) -> Any:
        if name == "_fields" or name not in self._fields:
            raise AttributeError("Cannot find field '{}' in the given Instances!".format(name))
        return self._fields[name]

    def set(self, name: str, value: Any) -> None:
        data_len = len(value)
        if len(self._fields):
            assert len(self) == data_len, "Adding a field of length {} to a Instances of length {}".format(
                data_len, len(self))
        self._fields[name] = value

    def has(self, name: str) -> bool:
        return name in self._fields

    def get(self, name: str) -> Any:
        return self._fields[name]

    def __getitem__(self, item) -> "Instances":
        ret = Instances(self._image_size)
        for k, v in self._fields.items():
            ret.set(k, v[item])
        return ret

    def __len__(self) -> int:
        for v in self._fields.values():
            return v.__len__()
        raise NotImplementedError("Empty Instances does not support __len__!")


def pairwise_intersection(boxes1: Boxes, boxes2: Boxes) -> torch.Tensor:
    boxes1, boxes2 = boxes1.tensor, boxes2.tensor
    width_height = torch.min(boxes1[:, None, 2:], boxes2[:, 2:]) - torch.max(boxes1[:, None, :2], boxes2[:, :2])
    width_height.clamp_(min=0)
    return width_height.prod(dim=2)


def pairwise_iou(boxes1: Boxes, boxes2: Boxes) -> torch.Tensor:
    area1 = boxes1.area()
    area2 = boxes2.area()
    inter = pairwise_intersection(boxes1, boxes2)
    return torch.where(inter > 0, inter / (area1[:, None] + area2 - inter),
                       torch.zeros(1, dtype=inter.dtype, device=inter.device))


class Matcher:
    def __init__(self, thresholds: List[float], labels: List[int], allow_low_quality_matches: bool = False):
        thresholds = thresholds[:]
        assert thresholds[0] > 0
        thresholds.insert(0, -float("inf"))
        thresholds.append(float("inf"))
        assert all([low <= high for (low, high) in zip(thresholds[:-1], thresholds[1:])])
        assert all([label_i in [-1, 0, 1] for label_i in labels])
        assert len(labels) == len(thresholds) - 1
        self.thresholds = thresholds
        self.labels = labels
        self.allow_low_quality_matches = allow_low_quality_matches

    def __call__(self, match_quality_matrix):
        assert match_quality_matrix.dim() == 2
        if match_quality_matrix.numel() == 0:
            default_matches = match_quality_matrix.new_full((match_quality_matrix.size(1),), 0, dtype=torch.int64)
            default_match_labels = match_quality_matrix.new_full(
                (match_quality_matrix.size(1),), self.labels[0], dtype=torch.int8)
            return default_matches, default_match_labels

        assert torch.all(match_quality_matrix >= 0)
        matched_vals, matches = match_quality_matrix.max(dim=0)
        match_labels = matches.new_full(matches.size(), 1, dtype=torch.int8)
        for (l, low, high) in zip(self.labels, self.thresholds[:-1], self.thresholds[1:]):
            low_high = (matched_vals >= low) & (matched_vals < high)
            match_labels[low_high] = l
        if self.allow_low_quality_matches:
            self.set_low_quality_matches_(match_labels, match_quality_matrix)
        return matches, match_labels

    def set_low_quality_matches_(self, match_labels, match_quality_matrix):
        highest_quality_foreach_gt, _ = match_quality_matrix.max(dim=1)
        _, pred_inds_with_highest_quality = torch.nonzero(
            match_quality_matrix == highest_quality_foreach_gt[:, None], as_tuple=True)
        match_labels[pred_inds_with_highest_quality] = 1


_DEFAULT_SCALE_CLAMP = math.log(1000.0 / 16)


class Box2BoxTransform:
    def __init__(self, weights: Tuple[float, float, float, float], scale_clamp: float = _DEFAULT_SCALE_CLAMP):
        self.weights = weights
        self.scale_clamp = scale_clamp

    def get_deltas(self, src_boxes, target_boxes):
        assert isinstance(src_boxes, torch.Tensor), type(src_boxes)
        src_widths = src_boxes[:, 2] - src_boxes[:, 0]
        src_heights = src_boxes[:, 3] - src_boxes[:, 1]
        src_ctr_x = src_boxes[:, 0] + 0.5 * src_widths
        src_ctr_y = src_boxes[:, 1] + 0.5 * src_heights
        target_widths = target_boxes[:, 2] - target_boxes[:, 0]
        target_heights = target_boxes[:, 3] - target_boxes[:, 1]
        target_ctr_x = target_boxes[:, 0] + 0.5 * target_widths
        target_ctr_y = target_boxes[:, 1] + 0.5 * target_heights
        wx, wy, ww, wh = self.weights
        dx = wx * (target_ctr_x - src_ctr_x) / src_widths
        dy = wy * (target_ctr_y - src_ctr_y) / src_heights
        dw = ww * torch.log(target_widths / src_widths)
        dh = wh * torch.log(target_heights / src_heights)
        deltas = torch.stack((dx, dy, dw, dh), dim=1)
        assert (src_widths > 0).all().item(), "Input boxes to Box2BoxTransform are not valid!"
        return deltas

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
        dw = torch.clamp(deltas[:, 2::4] / ww, max=self.scale_clamp)
        dh = torch.clamp(deltas[:, 3::4] / wh, max=self.scale_clamp)
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


def grid_anchors(size, stride, sizes=(8.0, 16.0), aspect_ratios=(0.5, 1.0, 2.0)):
    cell = []
    for s in sizes:
        area = s ** 2.0
        for ar in aspect_ratios:
            w = math.sqrt(area / ar)
            h = ar * w
            cell.append([-w / 2.0, -h / 2.0, w / 2.0, h / 2.0])
    cell = torch.tensor(cell)
    shifts_x = torch.arange(0, size[1] * stride, step=stride, dtype=torch.float32)
    shifts_y = torch.arange(0, size[0] * stride, step=stride, dtype=torch.float32)
    shift_y, shift_x = torch.meshgrid(shifts_y, shifts_x, indexing="ij")
    shift_x, shift_y = shift_x.reshape(-1), shift_y.reshape(-1)
    shifts = torch.stack((shift_x, shift_y, shift_x, shift_y), dim=1)
    return (shifts.view(-1, 1, 4) + cell.view(1, -1, 4)).reshape(-1, 4)


class AnchorHeadWithLosses(nn.Module):
    def __init__(self, num_classes=3, num_anchors=6, stride=4):
        super().__init__()
        self.num_classes, self.stride = num_classes, stride
        self.backbone = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU(),
                                      nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU())
        self.cls_logits = nn.Conv2d(32, num_anchors * num_classes, 3, padding=1)
        self.bbox_pred = nn.Conv2d(32, num_anchors * 4, 3, padding=1)
        self.anchor_matcher = Matcher([0.3, 0.5], [0, -1, 1], allow_low_quality_matches=True)
        self.box2box_transform = Box2BoxTransform(weights=(1.0, 1.0, 1.0, 1.0))
        self.smooth_l1_beta = 0.1

    def label_anchors(self, anchors: Boxes, gt_instances: List[Instances]):
        gt_labels, matched_gt_boxes = [], []
        for gt_per_image in gt_instances:
            match_quality_matrix = pairwise_iou(gt_per_image.gt_boxes, anchors)
            matched_idxs, anchor_labels = self.anchor_matcher(match_quality_matrix)
            if len(gt_per_image) > 0:
                matched_gt_boxes_i = gt_per_image.gt_boxes.tensor[matched_idxs]
                gt_labels_i = gt_per_image.gt_classes[matched_idxs]
                gt_labels_i[anchor_labels == 0] = self.num_classes
                gt_labels_i[anchor_labels == -1] = -1
            else:
                matched_gt_boxes_i = torch.zeros_like(anchors.tensor)
                gt_labels_i = torch.zeros_like(matched_idxs) + self.num_classes
            gt_labels.append(gt_labels_i)
            matched_gt_boxes.append(matched_gt_boxes_i)
        return gt_labels, matched_gt_boxes

    def forward(self, images, gt_boxes: List[torch.Tensor], gt_classes: List[torch.Tensor]):
        image_size = tuple(images.shape[-2:])
        gt_instances = []
        for boxes, classes in zip(gt_boxes, gt_classes):
            inst = Instances(image_size)
            inst.gt_boxes = Boxes(boxes)
            inst.gt_classes = classes
            gt_instances.append(inst[inst.gt_boxes.nonempty()])

        features = self.backbone(images)
        n, _, h, w = features.shape
        anchors = Boxes(grid_anchors((h, w), self.stride))
        anchors.clip(image_size)
        pred_logits = self.cls_logits(features).permute(0, 2, 3, 1).reshape(n, -1, self.num_classes)
        pred_deltas = self.bbox_pred(features).permute(0, 2, 3, 1).reshape(n, -1, 4)

        gt_labels, matched_gt_boxes = self.label_anchors(anchors, gt_instances)
        gt_labels = torch.stack(gt_labels)
        valid_mask = gt_labels >= 0
        pos_mask = (gt_labels >= 0) & (gt_labels != self.num_classes)
        num_pos_anchors = pos_mask.sum().item()
        normalizer = max(num_pos_anchors, 1)

        gt_labels_target = F.one_hot(gt_labels[valid_mask], num_classes=self.num_classes + 1)[:, :-1]
        loss_cls = F.binary_cross_entropy_with_logits(
            pred_logits[valid_mask], gt_labels_target.to(pred_logits.dtype), reduction="sum")

        gt_anchor_deltas = [self.box2box_transform.get_deltas(anchors.tensor, k) for k in matched_gt_boxes]
        gt_anchor_deltas = torch.stack(gt_anchor_deltas)
        loss_box_reg = F.smooth_l1_loss(pred_deltas[pos_mask], gt_anchor_deltas[pos_mask],
                                        beta=self.smooth_l1_beta, reduction="sum")
        pred_boxes = self.box2box_transform.apply_deltas(pred_deltas.reshape(-1, 4),
                                                         anchors.tensor.repeat(n, 1)).view(n, -1, 4)
        return {"loss_cls": loss_cls / normalizer, "loss_box_reg": loss_box_reg / normalizer,
                "num_pos": num_pos_anchors, "pred_boxes": pred_boxes}


torch.manual_seed(0)
model = AnchorHeadWithLosses().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    images = torch.randn(2, 3, 32, 32, generator=g)
    gt_boxes = [torch.tensor([[2.0, 3.0, 14.0, 12.0], [16.0, 16.0, 30.0, 28.0], [5.0, 5.0, 5.0, 9.0]]),
                torch.tensor([[8.0, 0.0, 20.0, 24.0]])]
    gt_classes = [torch.tensor([0, 2, 1]), torch.tensor([1])]
    return images, gt_boxes, gt_classes
