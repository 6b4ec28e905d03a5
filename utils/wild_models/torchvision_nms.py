"""Detection post-processing as torchvision writes it, without compiled
ops: per-class boxes decoded from a head, low scores dropped by
`torch.where(scores > thresh)`, `remove_small_boxes` by widths and
heights, `batched_nms` by the coordinate-offset trick (each class's boxes
shifted by `idxs * (boxes.max() + 1)` so one class-agnostic NMS serves all
classes), a greedy NMS written in torch ops (`box_iou` by broadcast
`max`/`min` and `clamp(min=0)`, boxes visited in score order by `argsort`
in a Python loop over the candidate count, each suppressing later boxes
through a boolean row), `keep[:detections_per_img]` and the kept boxes,
scores and labels in a list of dicts per image."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def box_area(boxes):
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def box_iou(boxes1, boxes2):
    area1 = box_area(boxes1)
    area2 = box_area(boxes2)
    lt = torch.max(boxes1[:, None, :2], boxes2[:, :2])
    rb = torch.min(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    return inter / (area1[:, None] + area2 - inter)


def nms(boxes, scores, iou_threshold):
    """Greedy NMS: the kept indices in decreasing score order."""
    order = scores.argsort(descending=True)
    boxes = boxes[order]
    iou = box_iou(boxes, boxes)
    n = boxes.shape[0]
    suppressed = torch.zeros(n, dtype=torch.bool, device=boxes.device)
    later = torch.ones(n, n, dtype=torch.bool, device=boxes.device).triu(1)
    for i in range(n):
        row = (iou[i] > iou_threshold) & later[i] & ~suppressed[i]
        suppressed = suppressed | row
    return order[~suppressed]


def batched_nms(boxes, scores, idxs, iou_threshold):
    if boxes.numel() == 0:
        return torch.empty((0,), dtype=torch.int64, device=boxes.device)
    max_coordinate = boxes.max()
    offsets = idxs.to(boxes) * (max_coordinate + torch.tensor(1).to(boxes))
    boxes_for_nms = boxes + offsets[:, None]
    return nms(boxes_for_nms, scores, iou_threshold)


def remove_small_boxes(boxes, min_size):
    ws, hs = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    keep = (ws >= min_size) & (hs >= min_size)
    return torch.where(keep)[0]


def clip_boxes_to_image(boxes, size):
    height, width = size
    x = boxes[..., 0::2].clamp(min=0, max=width)
    y = boxes[..., 1::2].clamp(min=0, max=height)
    return torch.stack((x, y), dim=-1).reshape(boxes.shape)


class Detector(nn.Module):
    def __init__(self, channels=16, num_classes=4, num_anchors=12,
                 score_thresh=0.05, nms_thresh=0.5, detections_per_img=8):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, channels, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(channels, channels, 3, stride=2, padding=1), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.cls_head = nn.Linear(channels, num_anchors * num_classes)
        self.box_head = nn.Linear(channels, num_anchors * num_classes * 4)
        self.register_buffer("anchors", torch.rand(num_anchors, 4) * 24 + torch.tensor([0.0, 0.0, 8.0, 8.0]))
        self.num_classes = num_classes
        self.score_thresh = score_thresh
        self.nms_thresh = nms_thresh
        self.detections_per_img = detections_per_img

    def postprocess(self, class_logits, box_regression, image_size):
        num_anchors = self.anchors.shape[0]
        pred_boxes = self.anchors[:, None, :] + box_regression.view(num_anchors, self.num_classes, 4) * 4.0
        pred_boxes = clip_boxes_to_image(pred_boxes, image_size)
        pred_scores = F.softmax(class_logits.view(num_anchors, self.num_classes), -1)
        labels = torch.arange(self.num_classes, device=pred_scores.device)
        labels = labels.view(1, -1).expand_as(pred_scores)
        # background is class 0
        boxes = pred_boxes[:, 1:].reshape(-1, 4)
        scores = pred_scores[:, 1:].reshape(-1)
        labels = labels[:, 1:].reshape(-1)
        inds = torch.where(scores > self.score_thresh)[0]
        boxes, scores, labels = boxes[inds], scores[inds], labels[inds]
        keep = remove_small_boxes(boxes, min_size=1e-2)
        boxes, scores, labels = boxes[keep], scores[keep], labels[keep]
        keep = batched_nms(boxes, scores, labels, self.nms_thresh)
        keep = keep[: self.detections_per_img]
        return {"boxes": boxes[keep], "scores": scores[keep], "labels": labels[keep]}

    def forward(self, images):
        feats = self.backbone(images)
        logits = self.cls_head(feats)
        regression = self.box_head(feats)
        size = images.shape[-2:]
        return [self.postprocess(logits[i], regression[i], size) for i in range(images.shape[0])]


torch.manual_seed(0)
model = Detector().eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randn(2, 3, 32, 32, generator=g)
