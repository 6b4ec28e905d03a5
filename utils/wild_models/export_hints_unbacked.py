"""Detection post-processing written for torch.export / AOTInductor
deployment, with the hints such code carries for values read from data
(the `torch._check` idioms of the export tutorials and ExecuTorch
models): a confidence filter by `nonzero` whose count is read by
`.item()` and declared a size by `torch._check_is_size` and bounded by
`torch._check(n <= max_det)`, candidates cut by `narrow(0, 0, n)` of a
score-sorted order, `torch.sym_min` of the count with a top-k budget, the kept order sorted
back so that each image's detections are contiguous,
a per-image count by `index_add_` of ones into `zeros(B)` read by
`.tolist()`, each checked `>= 0` (the newer spelling) and their `sum` checked equal to the
count, outputs `split` by those counts into a tuple,
and a fixed-size padded result built by `new_full` plus slice
assignment, so a runtime can read either form."""
import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self, c=16, classes=3):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, c, 3, 2, 1), nn.ReLU(), nn.Conv2d(c, c, 3, 2, 1), nn.ReLU())
        self.cls = nn.Conv2d(c, classes, 1)
        self.box = nn.Conv2d(c, 4, 1)

    def forward(self, x):
        f = self.body(x)
        return self.cls(f), self.box(f)


class ExportFriendlyPostprocess(nn.Module):
    def __init__(self, threshold=0.5, max_det=40, top_k=12):
        super().__init__()
        self.head = Head()
        self.threshold, self.max_det, self.top_k = threshold, max_det, top_k

    def forward(self, images):
        cls, box = self.head(images)
        b, c, h, w = cls.shape
        scores, labels = cls.sigmoid().flatten(2).max(1)  # [B, HW]
        boxes = box.flatten(2).transpose(1, 2)  # [B, HW, 4]
        keep = (scores > self.threshold).nonzero()  # [n, 2]: image, location
        n = keep.shape[0]
        torch._check_is_size(n)
        torch._check(n <= b * h * w)
        flat_scores = scores[keep[:, 0], keep[:, 1]]
        order = flat_scores.argsort(descending=True)
        k = torch.sym_min(n, self.top_k * b)
        order = order.narrow(0, 0, k).sort().values  # the best k, back in image order
        keep = keep[order]
        det_scores = flat_scores[order]
        det_boxes = boxes[keep[:, 0], keep[:, 1]]
        det_labels = labels[keep[:, 0], keep[:, 1]]
        image_of = keep[:, 0]
        counts = torch.zeros(b, dtype=torch.long).index_add_(0, image_of, torch.ones_like(image_of)).tolist()
        for count in counts:
            torch._check(count >= 0)
        torch._check(sum(counts) == k)
        per_image = tuple(zip(det_boxes.split(counts), det_scores.split(counts), det_labels.split(counts)))
        padded = det_scores.new_full((self.max_det,), -1.0)
        m = min(k, self.max_det)
        padded[:m] = det_scores[:m]
        return per_image, padded, keep


torch.manual_seed(0)
model = ExportFriendlyPostprocess().eval()


def example_inputs():
    return torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(1))
