"""timm's `Mixup` in a training step: `mixup_target` building smoothed
one-hot targets by `torch.full((n, classes), off_value).scatter_(1, idx, on_value)`
for the batch and its flip, `rand_bbox` from `np.sqrt(1 - lam)` and
`np.clip` on Python ints with `cutmix_bbox_and_lam` correcting `lam` by
the box's area, mixing in place on the normalised batch
(`x.mul_(lam).add_(x_flipped)` for mixup, `x[:, :, yl:yh, xl:xh] =
x.flip(0)[:, :, yl:yh, xl:xh]` for cutmix), the mode and `lam` given
per call as `Mixup.__call__` draws them (here passed in so the call is
repeatable), then `SoftTargetCrossEntropy` and a `BinaryCrossEntropy`
with `target_threshold` on a small convnet."""
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


def one_hot(x, num_classes, on_value=1.0, off_value=0.0):
    x = x.long().view(-1, 1)
    return torch.full((x.size()[0], num_classes), off_value, device=x.device).scatter_(1, x, on_value)


def mixup_target(target, num_classes, lam=1.0, smoothing=0.0):
    off_value = smoothing / num_classes
    on_value = 1.0 - smoothing + off_value
    y1 = one_hot(target, num_classes, on_value=on_value, off_value=off_value)
    y2 = one_hot(target.flip(0), num_classes, on_value=on_value, off_value=off_value)
    return y1 * lam + y2 * (1.0 - lam)


def rand_bbox(img_shape, lam, margin=0.0, count=None):
    ratio = np.sqrt(1 - lam)
    img_h, img_w = img_shape[-2:]
    cut_h, cut_w = int(img_h * ratio), int(img_w * ratio)
    margin_y, margin_x = int(margin * cut_h), int(margin * cut_w)
    cy = img_h // 2 + margin_y  # the centre timm draws by np.random.randint, fixed here
    cx = img_w // 2 - margin_x
    yl = np.clip(cy - cut_h // 2, 0, img_h)
    yh = np.clip(cy + cut_h // 2, 0, img_h)
    xl = np.clip(cx - cut_w // 2, 0, img_w)
    xh = np.clip(cx + cut_w // 2, 0, img_w)
    return yl, yh, xl, xh


def cutmix_bbox_and_lam(img_shape, lam, correct_lam=True):
    yl, yu, xl, xu = rand_bbox(img_shape, lam)
    if correct_lam:
        bbox_area = (yu - yl) * (xu - xl)
        lam = 1.0 - bbox_area / float(img_shape[-2] * img_shape[-1])
    return (yl, yu, xl, xu), lam


class Mixup:
    def __init__(self, label_smoothing=0.1, num_classes=10, correct_lam=True):
        self.label_smoothing = label_smoothing
        self.num_classes = num_classes
        self.correct_lam = correct_lam

    def _mix_batch(self, x, lam, use_cutmix):
        if lam == 1.0:
            return 1.0
        if use_cutmix:
            (yl, yh, xl, xh), lam = cutmix_bbox_and_lam(x.shape, lam, correct_lam=self.correct_lam)
            x[:, :, yl:yh, xl:xh] = x.flip(0)[:, :, yl:yh, xl:xh]
        else:
            x_flipped = x.flip(0).mul_(1.0 - lam)
            x.mul_(lam).add_(x_flipped)
        return lam

    def __call__(self, x, target, lam, use_cutmix):
        assert len(x) % 2 == 0, "Batch size should be even when using this"
        lam = self._mix_batch(x, lam, use_cutmix)
        target = mixup_target(target, self.num_classes, lam, self.label_smoothing)
        return x, target


class SoftTargetCrossEntropy(nn.Module):
    def forward(self, x, target):
        loss = torch.sum(-target * F.log_softmax(x, dim=-1), dim=-1)
        return loss.mean()


class BinaryCrossEntropy(nn.Module):
    def __init__(self, smoothing=0.1, target_threshold=0.2, reduction="mean"):
        super().__init__()
        self.smoothing = smoothing
        self.target_threshold = target_threshold
        self.reduction = reduction

    def forward(self, x, target):
        assert x.shape[0] == target.shape[0]
        if target.shape != x.shape:
            num_classes = x.shape[-1]
            off_value = self.smoothing / num_classes
            on_value = 1.0 - self.smoothing + off_value
            target = target.long().view(-1, 1)
            target = torch.full((target.size()[0], num_classes), off_value, device=x.device,
                                dtype=x.dtype).scatter_(1, target, on_value)
        if self.target_threshold is not None:
            target = target.gt(self.target_threshold).to(dtype=target.dtype)
        return F.binary_cross_entropy_with_logits(x, target, reduction=self.reduction)


class MixupTrainStep(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.register_buffer("mean", torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1))
        self.net = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.GELU(),
                                 nn.Conv2d(16, 32, 3, 2, 1), nn.BatchNorm2d(32), nn.GELU(),
                                 nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, num_classes))
        self.mixup_fn = Mixup(num_classes=num_classes)
        self.train_loss_fn = SoftTargetCrossEntropy()
        self.bce = BinaryCrossEntropy()

    def forward(self, images, target, lam=0.7, mode="cutmix"):
        x = (images - self.mean) / self.std
        x, soft_target = self.mixup_fn(x, target, lam, use_cutmix=mode == "cutmix")
        logits = self.net(x)
        loss = self.train_loss_fn(logits, soft_target)
        bce = self.bce(logits, soft_target)
        return loss, bce, soft_target


torch.manual_seed(0)
model = MixupTrainStep().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.rand(4, 3, 16, 16, generator=g), torch.tensor([1, 7, 3, 3])


def example_kwargs():
    return {"lam": 0.64, "mode": "cutmix"}
