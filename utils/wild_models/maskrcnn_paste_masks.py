"""Instance-segmentation post-processing as Mask R-CNN deployments do it
in plain torch (torchvision's `paste_masks_in_image`, detectron2's
`_do_paste_mask` for CPU): per-box mask logits from a small mask head over
RoI features, the mask of each detection's predicted class picked by
`masks[arange(N), labels]`, boxes expanded by the padding ratio of the
mask (`expand_boxes` by centre and half sizes), the image grid built
from `torch.arange(y0, y1) + 0.5` normalized into each box,
`F.grid_sample(align_corners=False)` of every mask onto the whole image
at once, a 0.5 threshold into `bool`, per-instance areas, and the
detections scaled back from the network's input size to the original
image size by a ratio tensor (`boxes * ratios.repeat(2)`), then clipped
by `clamp` to the image bounds."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def expand_boxes(boxes, scale):
    w_half = (boxes[:, 2] - boxes[:, 0]) * 0.5 * scale
    h_half = (boxes[:, 3] - boxes[:, 1]) * 0.5 * scale
    x_c = (boxes[:, 2] + boxes[:, 0]) * 0.5
    y_c = (boxes[:, 3] + boxes[:, 1]) * 0.5
    return torch.stack([x_c - w_half, y_c - h_half, x_c + w_half, y_c + h_half], dim=1)


def paste_masks(masks, boxes, img_h, img_w, padding=1):
    m = masks.shape[-1]
    scale = (m + 2 * padding) / m
    masks = F.pad(masks, (padding,) * 4)
    boxes = expand_boxes(boxes, scale)
    x0, y0, x1, y1 = torch.split(boxes, 1, dim=1)  # each [N, 1]
    img_y = torch.arange(0, img_h, device=boxes.device, dtype=torch.float32) + 0.5
    img_x = torch.arange(0, img_w, device=boxes.device, dtype=torch.float32) + 0.5
    img_y = (img_y - y0) / (y1 - y0) * 2 - 1
    img_x = (img_x - x0) / (x1 - x0) * 2 - 1
    n = masks.shape[0]
    gx = img_x[:, None, :].expand(n, img_y.size(1), img_x.size(1))
    gy = img_y[:, :, None].expand(n, img_y.size(1), img_x.size(1))
    grid = torch.stack([gx, gy], dim=3)
    return F.grid_sample(masks[:, None], grid, align_corners=False)[:, 0]


class MaskHead(nn.Module):
    def __init__(self, c=16, classes=4):
        super().__init__()
        self.convs = nn.Sequential(nn.Conv2d(c, c, 3, 1, 1), nn.ReLU(), nn.Conv2d(c, c, 3, 1, 1), nn.ReLU())
        self.up = nn.ConvTranspose2d(c, c, 2, 2)
        self.logits = nn.Conv2d(c, classes, 1)

    def forward(self, roi_features):
        return self.logits(F.relu(self.up(self.convs(roi_features))))


class MaskPostProcess(nn.Module):
    def __init__(self, net_size=(64, 64), threshold=0.5):
        super().__init__()
        self.net_size, self.threshold = net_size, threshold
        self.head = MaskHead()

    def forward(self, roi_features, boxes, labels, scores, original_size):
        mask_logits = self.head(roi_features)
        n = mask_logits.shape[0]
        probs = mask_logits[torch.arange(n, device=labels.device), labels].sigmoid()
        h, w = original_size
        ratios = torch.tensor([w / self.net_size[1], h / self.net_size[0]], device=boxes.device)
        boxes = boxes * ratios.repeat(2)
        boxes[:, 0::2] = boxes[:, 0::2].clamp(0, w)
        boxes[:, 1::2] = boxes[:, 1::2].clamp(0, h)
        pasted = paste_masks(probs, boxes, h, w)
        masks = pasted >= self.threshold
        return {"boxes": boxes, "labels": labels, "scores": scores, "masks": masks,
                "mask_probs": pasted, "areas": masks.flatten(1).sum(1)}


torch.manual_seed(0)
model = MaskPostProcess().eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    roi = torch.randn(5, 16, 7, 7, generator=g)
    xy = torch.rand(5, 2, generator=g) * 40
    wh = torch.rand(5, 2, generator=g) * 20 + 4
    boxes = torch.cat([xy, xy + wh], 1)
    labels = torch.tensor([0, 3, 1, 1, 2])
    scores = torch.rand(5, generator=g)
    return roi, boxes, labels, scores, (48, 80)
