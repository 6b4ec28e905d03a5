"""Whole-image inference as MONAI's `sliding_window_inference` and
segmentation test-time augmentation write it: a small segmentation net in
`channels_last` memory format (model and input), the image padded up to
the ROI by `F.pad` with sizes from `max(roi - s, 0)`, window starts from
`range(0, size - roi + 1, stride)` plus a last window flush with the edge,
slices built as `[slice(None), slice(None)] + [slice(s, s + r) ...]`
tuples, a Gaussian importance map (`torch.exp(-x**2 / (2 * sigma**2))`
outer product, clamped to a minimum), windows batched by `torch.cat`,
predictions accumulated by `output[sl] += pred * importance` and
`count[sl] += importance` then divided, the padding cropped off, and
flips over each spatial axis plus a `torch.rot90` averaged as
test-time augmentation with their inverses."""
import itertools

import torch
import torch.nn as nn
import torch.nn.functional as F


class SegNet(nn.Module):
    def __init__(self, in_ch=3, classes=4, width=12):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(in_ch, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(),
                                 nn.Conv2d(width, width, 3, padding=1, stride=2), nn.ReLU())
        self.dec = nn.Sequential(nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),
                                 nn.Conv2d(width, classes, 3, padding=1))

    def forward(self, x):
        return self.dec(self.enc(x))


def gaussian_importance(roi, sigma_scale=0.125, device=None):
    maps = []
    for r in roi:
        x = torch.arange(r, dtype=torch.float32, device=device) - (r - 1) / 2.0
        sigma = sigma_scale * r
        maps.append(torch.exp(-(x ** 2) / (2 * sigma ** 2)))
    importance = maps[0][:, None] * maps[1][None, :]
    importance = importance / importance.max()
    return importance.clamp(min=1e-3)


def window_starts(size, roi, overlap):
    stride = max(int(roi * (1 - overlap)), 1)
    starts = list(range(0, max(size - roi, 0) + 1, stride))
    if starts[-1] + roi < size:
        starts.append(size - roi)
    return starts


def sliding_window_inference(inputs, roi_size, sw_batch_size, predictor, overlap=0.25):
    spatial = inputs.shape[2:]
    pad = []
    for s, r in reversed(list(zip(spatial, roi_size))):
        extra = max(r - s, 0)
        pad += [extra // 2, extra - extra // 2]
    inputs = F.pad(inputs, pad, mode="constant", value=0.0)
    padded = inputs.shape[2:]
    slices = []
    for starts in itertools.product(*(window_starts(s, r, overlap) for s, r in zip(padded, roi_size))):
        slices.append(tuple([slice(None), slice(None)] + [slice(s, s + r) for s, r in zip(starts, roi_size)]))
    importance = gaussian_importance(roi_size, device=inputs.device)
    output = count = None
    for i in range(0, len(slices), sw_batch_size):
        group = slices[i:i + sw_batch_size]
        window = torch.cat([inputs[sl] for sl in group])
        pred = predictor(window)
        if output is None:
            output = inputs.new_zeros((inputs.shape[0], pred.shape[1]) + tuple(padded))
            count = inputs.new_zeros((1, 1) + tuple(padded))
        for j, sl in enumerate(group):
            b = inputs.shape[0]
            output[sl] += pred[j * b:(j + 1) * b] * importance
            count[sl] += importance
    output = output / count
    crop = [slice(None), slice(None)]
    for k in range(len(spatial)):
        lo = pad[2 * (len(spatial) - 1 - k)]
        crop.append(slice(lo, lo + spatial[k]))
    return output[tuple(crop)]


class TTASegmenter(nn.Module):
    def __init__(self, roi=(16, 16), sw_batch_size=3):
        super().__init__()
        self.net = SegNet().to(memory_format=torch.channels_last)
        self.roi = roi
        self.sw_batch_size = sw_batch_size

    def predict(self, x):
        return sliding_window_inference(x, self.roi, self.sw_batch_size, self.net).softmax(1)

    def forward(self, image):
        probs = [self.predict(image)]
        for dims in ([2], [3]):
            probs.append(self.predict(image.flip(dims)).flip(dims))
        probs.append(torch.rot90(self.predict(torch.rot90(image, 1, (2, 3))), -1, (2, 3)))
        mean = torch.stack(probs).mean(0)
        return mean, mean.argmax(1)


torch.manual_seed(0)
model = TTASegmenter()
with torch.no_grad():
    model.train()(torch.randn(2, 3, 20, 20).contiguous(memory_format=torch.channels_last))
model.eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.randn(2, 3, 20, 30, generator=g).contiguous(memory_format=torch.channels_last),)
