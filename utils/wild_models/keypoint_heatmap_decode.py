"""Top-down pose estimation as SimpleBaseline / HRNet / mmpose decode it,
in torch ops: a ResNet-ish stem with a deconvolution head
(`ConvTranspose2d` with `output_padding` chosen from the kernel size by a
helper), `get_max_preds` by `argmax` over flattened heatmaps and
`torch.stack([idx % width, torch.div(idx, width, rounding_mode='floor')])`,
coordinates zeroed where the peak is not positive by a `gt(0)` mask
`repeat`ed and multiplied, the quarter-offset refinement taken from the
`sign` of neighbouring heatmap differences read by `gather` at indices
clamped with `clamp(0, w - 1)` (the border test of the reference code as
a mask), flip test by `torch.flip` of the input, heatmaps of the flipped
image swapped by a `flip_pairs` index list and shifted one pixel,
coordinates mapped back to the image through per-sample `center` and
`scale` tensors (`scale * 200 / heatmap_size`), and an OKS-style
visibility score from `maxvals`."""
import torch
import torch.nn as nn
import torch.nn.functional as F

FLIP_PAIRS = [[1, 2], [3, 4], [5, 6]]


def _get_deconv_cfg(deconv_kernel):
    if deconv_kernel == 4:
        padding, output_padding = 1, 0
    elif deconv_kernel == 3:
        padding, output_padding = 1, 1
    elif deconv_kernel == 2:
        padding, output_padding = 0, 0
    else:
        raise ValueError(f"Not supported num_kernels ({deconv_kernel}).")
    return deconv_kernel, padding, output_padding


class BasicBlock(nn.Module):
    def __init__(self, inplanes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = F.relu(self.bn1(self.conv1(x)), inplace=True)
        out = self.bn2(self.conv2(out))
        return F.relu(out + identity, inplace=True)


class PoseResNet(nn.Module):
    def __init__(self, num_joints=7, deconv_kernels=(4, 3)):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True))
        self.layer1 = BasicBlock(16, 24, stride=2)
        self.layer2 = BasicBlock(24, 32, stride=2)
        layers = []
        inplanes = 32
        for kernel in deconv_kernels:
            kernel, padding, output_padding = _get_deconv_cfg(kernel)
            layers.append(nn.ConvTranspose2d(inplanes, 16, kernel, stride=2, padding=padding,
                                             output_padding=output_padding, bias=False))
            layers.append(nn.BatchNorm2d(16))
            layers.append(nn.ReLU(inplace=True))
            inplanes = 16
        self.deconv_layers = nn.Sequential(*layers)
        self.final_layer = nn.Conv2d(16, num_joints, 1)

    def forward(self, x):
        x = self.layer2(self.layer1(self.stem(x)))
        return self.final_layer(self.deconv_layers(x))


def get_max_preds(batch_heatmaps):
    assert batch_heatmaps.dim() == 4, "batch_images should be 4-ndim"
    batch_size, num_joints, _, width = batch_heatmaps.shape
    heatmaps_reshaped = batch_heatmaps.reshape(batch_size, num_joints, -1)
    idx = torch.argmax(heatmaps_reshaped, 2)
    maxvals = torch.amax(heatmaps_reshaped, 2)
    maxvals = maxvals.reshape(batch_size, num_joints, 1)
    idx = idx.reshape(batch_size, num_joints, 1)
    preds = torch.cat([idx % width, torch.div(idx, width, rounding_mode="floor")], dim=2).float()
    pred_mask = torch.gt(maxvals, 0.0).repeat(1, 1, 2).float()
    preds *= pred_mask
    return preds, maxvals


def refine_quarter_offset(coords, batch_heatmaps):
    b, k, h, w = batch_heatmaps.shape
    flat = batch_heatmaps.reshape(b, k, h * w)
    px = (coords[..., 0] + 0.5).floor().long()
    py = (coords[..., 1] + 0.5).floor().long()
    inside = (px > 1) & (px < w - 1) & (py > 1) & (py < h - 1)

    def at(x, y):
        idx = y.clamp(0, h - 1) * w + x.clamp(0, w - 1)
        return flat.gather(2, idx[..., None])[..., 0]

    dx = at(px + 1, py) - at(px - 1, py)
    dy = at(px, py + 1) - at(px, py - 1)
    diff = torch.stack([dx, dy], dim=-1)
    return coords + torch.sign(diff) * 0.25 * inside[..., None].float()


def transform_preds(coords, center, scale, output_size):
    scale = scale * 200.0
    size = coords.new_tensor(output_size)
    return coords * (scale[:, None, :] / size) + center[:, None, :] - scale[:, None, :] * 0.5


class TopDownPose(nn.Module):
    def __init__(self, flip_test=True, shift_heatmap=True):
        super().__init__()
        self.backbone = PoseResNet()
        self.flip_test = flip_test
        self.shift_heatmap = shift_heatmap

    def flip_back(self, output_flipped):
        output_flipped = torch.flip(output_flipped, dims=[3])
        perm = list(range(output_flipped.shape[1]))
        for a, b in FLIP_PAIRS:
            perm[a], perm[b] = perm[b], perm[a]
        return output_flipped[:, perm]

    def forward(self, img, center, scale):
        heatmaps = self.backbone(img)
        if self.flip_test:
            flipped = self.flip_back(self.backbone(torch.flip(img, [3])))
            if self.shift_heatmap:
                flipped[:, :, :, 1:] = flipped.clone()[:, :, :, 0:-1]
            heatmaps = (heatmaps + flipped) * 0.5
        coords, maxvals = get_max_preds(heatmaps)
        coords = refine_quarter_offset(coords, heatmaps)
        h, w = heatmaps.shape[-2:]
        preds = transform_preds(coords, center, scale, [w, h])
        score = maxvals.squeeze(-1).clamp(min=0).mean(-1)
        return {"keypoints": torch.cat([preds, maxvals], -1), "score": score, "heatmaps": heatmaps}


torch.manual_seed(0)
model = TopDownPose()
with torch.no_grad():
    for _m in model.modules():
        if isinstance(_m, nn.BatchNorm2d):
            _m.running_mean.normal_(0, 0.1)
            _m.running_var.uniform_(0.5, 1.5)
model.eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    img = torch.randn(2, 3, 64, 48, generator=g)
    center = torch.tensor([[120.0, 90.0], [60.0, 200.0]])
    scale = torch.tensor([[0.8, 1.0], [1.2, 1.6]])
    return img, center, scale
