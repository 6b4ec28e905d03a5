"""Segmentation training losses as LovaszSoftmax, MONAI and nnU-Net write
them, on a small encoder-decoder with deep supervision: Berman's
`lovasz_softmax_flat` (per-class loop, `classes='present'` skipping a
class whose `fg.sum() == 0`, errors sorted descending by `torch.sort`,
`fg[perm.data]`, `lovasz_grad` by `cumsum` and the in-place difference
`jaccard[1:p] = jaccard[1:p] - jaccard[0:-1]`, `torch.dot` of errors and
gradient), pixels with the ignore label dropped by
`valid.nonzero().squeeze()` before it, MONAI-style soft Dice over
`F.one_hot(...).permute` with `smooth_nr`/`smooth_dr` and
`include_background=False`, and nnU-Net's `DeepSupervisionWrapper`
weights `1 / 2**i` normalised with numpy, targets nearest-downsampled
per scale."""
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


def lovasz_grad(gt_sorted):
    p = len(gt_sorted)
    gts = gt_sorted.sum()
    intersection = gts - gt_sorted.float().cumsum(0)
    union = gts + (1 - gt_sorted).float().cumsum(0)
    jaccard = 1.0 - intersection / union
    if p > 1:
        jaccard[1:p] = jaccard[1:p] - jaccard[0:-1]
    return jaccard


def flatten_probas(probas, labels, ignore=None):
    B, C, H, W = probas.size()
    probas = probas.permute(0, 2, 3, 1).contiguous().view(-1, C)
    labels = labels.view(-1)
    if ignore is None:
        return probas, labels
    valid = labels != ignore
    vprobas = probas[valid.nonzero().squeeze()]
    vlabels = labels[valid]
    return vprobas, vlabels


def lovasz_softmax_flat(probas, labels, classes="present"):
    if probas.numel() == 0:
        return probas * 0.0
    C = probas.size(1)
    losses = []
    class_to_sum = list(range(C)) if classes in ["all", "present"] else classes
    for c in class_to_sum:
        fg = (labels == c).float()
        if classes == "present" and fg.sum() == 0:
            continue
        class_pred = probas[:, c]
        errors = (fg - class_pred).abs()
        errors_sorted, perm = torch.sort(errors, 0, descending=True)
        perm = perm.data
        fg_sorted = fg[perm]
        losses.append(torch.dot(errors_sorted, lovasz_grad(fg_sorted)))
    return torch.stack(losses).mean()


class DiceLoss(nn.Module):
    def __init__(self, include_background=False, smooth_nr=1e-5, smooth_dr=1e-5, squared_pred=False):
        super().__init__()
        self.include_background = include_background
        self.smooth_nr = smooth_nr
        self.smooth_dr = smooth_dr
        self.squared_pred = squared_pred

    def forward(self, logits, target):
        n_pred_ch = logits.shape[1]
        input = torch.softmax(logits, 1)
        target = F.one_hot(target.clamp(min=0), n_pred_ch).permute(0, 3, 1, 2).to(input.dtype)
        if not self.include_background:
            input = input[:, 1:]
            target = target[:, 1:]
        reduce_axis = list(range(2, len(input.shape)))
        intersection = torch.sum(target * input, dim=reduce_axis)
        if self.squared_pred:
            ground_o, pred_o = torch.sum(target ** 2, dim=reduce_axis), torch.sum(input ** 2, dim=reduce_axis)
        else:
            ground_o, pred_o = torch.sum(target, dim=reduce_axis), torch.sum(input, dim=reduce_axis)
        denominator = ground_o + pred_o
        f = 1.0 - (2.0 * intersection + self.smooth_nr) / (denominator + self.smooth_dr)
        return torch.mean(f)


class DeepSupervisionWrapper(nn.Module):
    def __init__(self, loss, weight_factors):
        super().__init__()
        self.loss = loss
        self.weight_factors = tuple(weight_factors)

    def forward(self, outputs, targets):
        return sum(w * self.loss(o, t) for o, t, w in zip(outputs, targets, self.weight_factors) if w != 0.0)


class Block(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.InstanceNorm2d(cout, affine=True),
                                  nn.LeakyReLU(0.01, inplace=True))

    def forward(self, x):
        return self.conv(x)


class SegNetWithLosses(nn.Module):
    def __init__(self, cin=1, classes=4, base=8, ignore_index=255):
        super().__init__()
        self.enc1 = Block(cin, base)
        self.enc2 = Block(base, base * 2)
        self.enc3 = Block(base * 2, base * 4)
        self.up2 = nn.ConvTranspose2d(base * 4, base * 2, 2, 2)
        self.dec2 = Block(base * 4, base * 2)
        self.up1 = nn.ConvTranspose2d(base * 2, base, 2, 2)
        self.dec1 = Block(base * 2, base)
        self.seg_layers = nn.ModuleList([nn.Conv2d(base, classes, 1), nn.Conv2d(base * 2, classes, 1),
                                         nn.Conv2d(base * 4, classes, 1)])
        weights = np.array([1 / (2 ** i) for i in range(3)])
        weights[-1] = 0
        self.ds_weights = weights / weights.sum()
        self.ignore_index = ignore_index
        self.dice = DeepSupervisionWrapper(DiceLoss(), self.ds_weights)

    def forward(self, image, target):
        e1 = self.enc1(image)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        e3 = self.enc3(F.max_pool2d(e2, 2))
        d2 = self.dec2(torch.cat((self.up2(e3), e2), 1))
        d1 = self.dec1(torch.cat((self.up1(d2), e1), 1))
        outputs = [self.seg_layers[0](d1), self.seg_layers[1](d2), self.seg_layers[2](e3)]
        targets = [target] + [F.interpolate(target[:, None].float(), size=o.shape[2:], mode="nearest")[:, 0].long()
                              for o in outputs[1:]]
        probas = F.softmax(outputs[0], dim=1)
        lovasz = lovasz_softmax_flat(*flatten_probas(probas, target, self.ignore_index), classes="present")
        ce = F.cross_entropy(outputs[0], target, ignore_index=self.ignore_index)
        dice = self.dice(outputs, [t.masked_fill(t == self.ignore_index, 0) for t in targets])
        return {"loss": ce + lovasz + dice, "lovasz": lovasz, "dice": dice, "logits": outputs[0]}


torch.manual_seed(0)
model = SegNetWithLosses().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    image = torch.randn(2, 1, 16, 16, generator=g)
    target = torch.randint(0, 3, (2, 16, 16), generator=g)  # class 3 absent: skipped as not present
    target[:, :2] = 255
    return image, target
