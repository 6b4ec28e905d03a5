"""One-stage detector training losses as torchvision and detectron2 write
them: `sigmoid_focal_loss(inputs, targets, alpha, gamma, reduction)` with
its `reduction` switch on a string, per-anchor classification targets by
`F.one_hot` of matched classes with the background column dropped, anchors
to ignore (`matched == -2`) removed by a boolean mask, `smooth_l1_loss` with
`beta` on the matched boxes' deltas, `generalized_box_iou_loss` on decoded
boxes with `eps` and `_upcast`, and the loss normaliser kept as an EMA
float on the module (`self.loss_normalizer = m * old + (1 - m) * max(num_pos, 1)`
from `num_pos.item()` as detectron2's RetinaNet does)."""
import torch
import torch.nn.functional as F
from torch import nn


def sigmoid_focal_loss(inputs, targets, alpha=0.25, gamma=2.0, reduction="none"):
    p = torch.sigmoid(inputs)
    ce_loss = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce_loss * ((1 - p_t) ** gamma)
    if alpha >= 0:
        alpha_t = alpha * targets + (1 - alpha) * (1 - targets)
        loss = alpha_t * loss
    if reduction == "none":
        pass
    elif reduction == "mean":
        loss = loss.mean()
    elif reduction == "sum":
        loss = loss.sum()
    else:
        raise ValueError(f"Invalid Value for arg 'reduction': '{reduction}'")
    return loss


def _upcast(t):
    if t.is_floating_point():
        return t if t.dtype in (torch.float32, torch.float64) else t.float()
    return t if t.dtype in (torch.int32, torch.int64) else t.int()


def generalized_box_iou_loss(boxes1, boxes2, reduction="none", eps=1e-7):
    boxes1 = _upcast(boxes1)
    boxes2 = _upcast(boxes2)
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    xkis1 = torch.max(x1, x1g)
    ykis1 = torch.max(y1, y1g)
    xkis2 = torch.min(x2, x2g)
    ykis2 = torch.min(y2, y2g)
    intsctk = torch.zeros_like(x1)
    mask = (ykis2 > ykis1) & (xkis2 > xkis1)
    intsctk[mask] = (xkis2[mask] - xkis1[mask]) * (ykis2[mask] - ykis1[mask])
    unionk = (x2 - x1) * (y2 - y1) + (x2g - x1g) * (y2g - y1g) - intsctk
    iouk = intsctk / (unionk + eps)
    xc1 = torch.min(x1, x1g)
    yc1 = torch.min(y1, y1g)
    xc2 = torch.max(x2, x2g)
    yc2 = torch.max(y2, y2g)
    area_c = (xc2 - xc1) * (yc2 - yc1)
    miouk = iouk - ((area_c - unionk) / (area_c + eps))
    loss = 1 - miouk
    if reduction == "mean":
        loss = loss.mean() if loss.numel() > 0 else 0.0 * loss.sum()
    elif reduction == "sum":
        loss = loss.sum()
    return loss


class BoxCoder:
    def __init__(self, weights=(1.0, 1.0, 1.0, 1.0), clamp=4.135):
        self.weights = weights
        self.clamp = clamp

    def decode(self, deltas, anchors):
        widths = anchors[:, 2] - anchors[:, 0]
        heights = anchors[:, 3] - anchors[:, 1]
        cx = anchors[:, 0] + 0.5 * widths
        cy = anchors[:, 1] + 0.5 * heights
        wx, wy, ww, wh = self.weights
        dx, dy = deltas[:, 0] / wx, deltas[:, 1] / wy
        dw = torch.clamp(deltas[:, 2] / ww, max=self.clamp)
        dh = torch.clamp(deltas[:, 3] / wh, max=self.clamp)
        pcx, pcy = dx * widths + cx, dy * heights + cy
        pw, ph = torch.exp(dw) * widths, torch.exp(dh) * heights
        return torch.stack((pcx - 0.5 * pw, pcy - 0.5 * ph, pcx + 0.5 * pw, pcy + 0.5 * ph), dim=1)

    def encode(self, gt, anchors):
        widths = anchors[:, 2] - anchors[:, 0]
        heights = anchors[:, 3] - anchors[:, 1]
        cx = anchors[:, 0] + 0.5 * widths
        cy = anchors[:, 1] + 0.5 * heights
        gw = gt[:, 2] - gt[:, 0]
        gh = gt[:, 3] - gt[:, 1]
        gx = gt[:, 0] + 0.5 * gw
        gy = gt[:, 1] + 0.5 * gh
        wx, wy, ww, wh = self.weights
        return torch.stack((wx * (gx - cx) / widths, wy * (gy - cy) / heights,
                            ww * torch.log(gw / widths), wh * torch.log(gh / heights)), dim=1)


class RetinaHeadWithLoss(nn.Module):
    def __init__(self, channels=16, num_anchors=3, num_classes=5, box_reg_loss_type="giou"):
        super().__init__()
        self.num_classes = num_classes
        self.num_anchors = num_anchors
        self.cls_subnet = nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1), nn.ReLU(),
                                        nn.Conv2d(channels, channels, 3, padding=1), nn.ReLU())
        self.bbox_subnet = nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1), nn.ReLU())
        self.cls_score = nn.Conv2d(channels, num_anchors * num_classes, 3, padding=1)
        self.bbox_pred = nn.Conv2d(channels, num_anchors * 4, 3, padding=1)
        self.box2box = BoxCoder()
        self.box_reg_loss_type = box_reg_loss_type
        self.focal_loss_alpha = 0.25
        self.focal_loss_gamma = 2.0
        self.smooth_l1_beta = 0.1
        self.loss_normalizer = 100.0
        self.loss_normalizer_momentum = 0.9

    def forward(self, features, anchors, gt_labels, gt_boxes):
        n, _, h, w = features.shape
        logits = self.cls_score(self.cls_subnet(features))
        deltas = self.bbox_pred(self.bbox_subnet(features))
        logits = logits.view(n, self.num_anchors, self.num_classes, h, w).permute(0, 3, 4, 1, 2)
        logits = logits.reshape(n, -1, self.num_classes)
        deltas = deltas.view(n, self.num_anchors, 4, h, w).permute(0, 3, 4, 1, 2).reshape(n, -1, 4)

        valid_mask = gt_labels >= 0
        pos_mask = (gt_labels >= 0) & (gt_labels != self.num_classes)
        num_pos_anchors = pos_mask.sum().item()
        self.loss_normalizer = self.loss_normalizer_momentum * self.loss_normalizer + (
            1 - self.loss_normalizer_momentum) * max(num_pos_anchors, 1)

        gt_labels_target = F.one_hot(gt_labels[valid_mask], num_classes=self.num_classes + 1)[:, :-1]
        loss_cls = sigmoid_focal_loss(logits[valid_mask], gt_labels_target.to(logits.dtype),
                                      alpha=self.focal_loss_alpha, gamma=self.focal_loss_gamma,
                                      reduction="sum")

        all_anchors = anchors.unsqueeze(0).expand(n, -1, -1)
        if self.box_reg_loss_type == "smooth_l1":
            target_deltas = self.box2box.encode(gt_boxes[pos_mask], all_anchors[pos_mask])
            loss_box = F.smooth_l1_loss(deltas[pos_mask], target_deltas, beta=self.smooth_l1_beta,
                                        reduction="sum")
        elif self.box_reg_loss_type == "giou":
            pred_boxes = self.box2box.decode(deltas[pos_mask], all_anchors[pos_mask])
            loss_box = generalized_box_iou_loss(pred_boxes, gt_boxes[pos_mask], reduction="sum")
        else:
            raise ValueError(f"Invalid bbox reg loss type '{self.box_reg_loss_type}'")
        return {"loss_cls": loss_cls / self.loss_normalizer,
                "loss_box_reg": loss_box / self.loss_normalizer,
                "sigmoid_focal_none": sigmoid_focal_loss(logits[:, :4], gt_labels_target.new_zeros(
                    n, 4, self.num_classes).to(logits.dtype)).mean(dim=(1, 2))}


torch.manual_seed(0)
model = RetinaHeadWithLoss().eval()
model.loss_normalizer_momentum = 0.0  # a fixed normaliser: every call sees the same state
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    n, h, w, a = 2, 6, 6, 3
    features = torch.randn(n, 16, h, w, generator=g)
    ys, xs = torch.meshgrid(torch.arange(h, dtype=torch.float32), torch.arange(w, dtype=torch.float32),
                            indexing="ij")
    centers = torch.stack((xs, ys), -1).reshape(-1, 1, 2).expand(-1, a, -1).reshape(-1, 2) * 8 + 4
    sizes = torch.tensor([8.0, 12.0, 16.0]).repeat(h * w).unsqueeze(1)
    anchors = torch.cat((centers - sizes / 2, centers + sizes / 2), 1)
    labels = torch.randint(0, 6, (n, h * w * a), generator=g)
    labels[:, ::7] = -2  # ignored anchors
    labels[:, ::5] = 5  # background
    jitter = torch.rand(n, h * w * a, 4, generator=g) * 3
    boxes = anchors.unsqueeze(0) + torch.cat((-jitter[..., :2], jitter[..., 2:]), -1)
    return features, anchors, labels, boxes
