"""DETR's set criterion around the Hungarian matcher, as the reference
code base writes it: targets a list of dicts of tensors with a different
number of boxes per image, the matching cost over the flattened batch
(`out_prob[:, tgt_ids]` class cost, `torch.cdist(p=1)` box cost,
generalized IoU of `box_cxcywh_to_xyxy` boxes), `C.view(bs, q, -1)` split
per image by `C.split(sizes, -1)` with `sizes = [len(v["boxes"]) ...]`;
the assignment itself (scipy's linear_sum_assignment) runs outside and
comes back as a list of `(src, tgt)` index tensors, from which
`_get_src_permutation_idx` builds the batch and query indices by
`torch.cat([torch.full_like(src, i) ...])`; the labels loss by
`torch.full(..., num_classes)` with matched labels written in and an
`empty_weight` buffer, the L1 and GIoU box losses over matched pairs
normalized by the box count."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def box_cxcywh_to_xyxy(x):
    x_c, y_c, w, h = x.unbind(-1)
    b = [(x_c - 0.5 * w), (y_c - 0.5 * h), (x_c + 0.5 * w), (y_c + 0.5 * h)]
    return torch.stack(b, dim=-1)


def box_area(boxes):
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def box_iou(boxes1, boxes2):
    area1, area2 = box_area(boxes1), box_area(boxes2)
    lt = torch.max(boxes1[:, None, :2], boxes2[:, :2])
    rb = torch.min(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    union = area1[:, None] + area2 - inter
    return inter / union, union


def generalized_box_iou(boxes1, boxes2):
    iou, union = box_iou(boxes1, boxes2)
    lt = torch.min(boxes1[:, None, :2], boxes2[:, :2])
    rb = torch.max(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = (rb - lt).clamp(min=0)
    area = wh[:, :, 0] * wh[:, :, 1]
    return iou - (area - union) / area


class DetrHead(nn.Module):
    def __init__(self, dim=32, num_queries=6, num_classes=5, eos_coef=0.1,
                 cost_class=1.0, cost_bbox=5.0, cost_giou=2.0):
        super().__init__()
        self.query_embed = nn.Embedding(num_queries, dim)
        self.input_proj = nn.Linear(16, dim)
        self.attn = nn.MultiheadAttention(dim, 4, batch_first=True)
        self.class_embed = nn.Linear(dim, num_classes + 1)
        self.bbox_embed = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, 4))
        self.num_classes = num_classes
        self.cost_class, self.cost_bbox, self.cost_giou = cost_class, cost_bbox, cost_giou
        empty_weight = torch.ones(num_classes + 1)
        empty_weight[-1] = eos_coef
        self.register_buffer("empty_weight", empty_weight)

    @torch.no_grad()
    def matching_cost(self, outputs, targets):
        bs, num_queries = outputs["pred_logits"].shape[:2]
        out_prob = outputs["pred_logits"].flatten(0, 1).softmax(-1)
        out_bbox = outputs["pred_boxes"].flatten(0, 1)
        tgt_ids = torch.cat([v["labels"] for v in targets])
        tgt_bbox = torch.cat([v["boxes"] for v in targets])
        cost_class = -out_prob[:, tgt_ids]
        cost_bbox = torch.cdist(out_bbox, tgt_bbox, p=1)
        cost_giou = -generalized_box_iou(box_cxcywh_to_xyxy(out_bbox), box_cxcywh_to_xyxy(tgt_bbox))
        C = self.cost_bbox * cost_bbox + self.cost_class * cost_class + self.cost_giou * cost_giou
        C = C.view(bs, num_queries, -1)
        sizes = [len(v["boxes"]) for v in targets]
        return [c[i] for i, c in enumerate(C.split(sizes, -1))]

    def _get_src_permutation_idx(self, indices):
        batch_idx = torch.cat([torch.full_like(src, i) for i, (src, _) in enumerate(indices)])
        src_idx = torch.cat([src for (src, _) in indices])
        return batch_idx, src_idx

    def losses(self, outputs, targets, indices):
        src_logits = outputs["pred_logits"]
        idx = self._get_src_permutation_idx(indices)
        target_classes_o = torch.cat([t["labels"][J] for t, (_, J) in zip(targets, indices)])
        target_classes = torch.full(src_logits.shape[:2], self.num_classes,
                                    dtype=torch.int64, device=src_logits.device)
        target_classes[idx] = target_classes_o
        loss_ce = F.cross_entropy(src_logits.transpose(1, 2), target_classes, self.empty_weight)
        num_boxes = max(sum(len(t["labels"]) for t in targets), 1)
        src_boxes = outputs["pred_boxes"][idx]
        target_boxes = torch.cat([t["boxes"][i] for t, (_, i) in zip(targets, indices)], dim=0)
        loss_bbox = F.l1_loss(src_boxes, target_boxes, reduction="none").sum() / num_boxes
        loss_giou = 1 - torch.diag(generalized_box_iou(box_cxcywh_to_xyxy(src_boxes),
                                                       box_cxcywh_to_xyxy(target_boxes)))
        return {"loss_ce": loss_ce, "loss_bbox": loss_bbox, "loss_giou": loss_giou.sum() / num_boxes}

    def forward(self, memory, targets, indices=None):
        src = self.input_proj(memory)
        queries = self.query_embed.weight.unsqueeze(0).repeat(src.shape[0], 1, 1)
        hs, _ = self.attn(queries, src, src)
        outputs = {"pred_logits": self.class_embed(hs), "pred_boxes": self.bbox_embed(hs).sigmoid()}
        if indices is None:
            return outputs, self.matching_cost(outputs, targets)
        return outputs, self.losses(outputs, targets, indices)


torch.manual_seed(0)
model = DetrHead().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    memory = torch.randn(2, 10, 16, generator=g)
    targets = [
        {"labels": torch.tensor([1, 3, 0]), "boxes": torch.rand(3, 4, generator=g) * 0.5 + 0.25},
        {"labels": torch.tensor([4, 2]), "boxes": torch.rand(2, 4, generator=g) * 0.5 + 0.25},
    ]
    # scipy's linear_sum_assignment of matching_cost on these inputs
    indices = [(torch.tensor([1, 2, 5]), torch.tensor([0, 1, 2])),
               (torch.tensor([4, 5]), torch.tensor([0, 1]))]
    return memory, targets, indices
