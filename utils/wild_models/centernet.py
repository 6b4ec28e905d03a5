"""CenterNet (xingyizhou/CenterNet, "Objects as Points") heads and
decoding: a small stride-4 backbone with deconvolution upsampling, `hm`,
`wh` and `reg` heads from a dict of head sizes built with `__setattr__`,
the heatmap bias filled with -2.19, `_sigmoid` clamped to [1e-4, 1-1e-4],
`_nms` as `max_pool2d(3, stride 1, padding 1)` compared with `==` and cast
by `.float()`, `_topk` over the flattened heatmap per class then across
classes with `//` and `%` index arithmetic and `.int().float()`,
`_gather_feat` by `gather` over an expanded index and
`_transpose_and_gather_feat` through `permute(0, 2, 3, 1).contiguous()`,
and boxes assembled by `torch.cat`."""
import torch
import torch.nn as nn


def _sigmoid(x):
    y = torch.clamp(x.sigmoid_(), min=1e-4, max=1 - 1e-4)
    return y


def _gather_feat(feat, ind, mask=None):
    dim = feat.size(2)
    ind = ind.unsqueeze(2).expand(ind.size(0), ind.size(1), dim)
    feat = feat.gather(1, ind)
    if mask is not None:
        mask = mask.unsqueeze(2).expand_as(feat)
        feat = feat[mask]
        feat = feat.view(-1, dim)
    return feat


def _transpose_and_gather_feat(feat, ind):
    feat = feat.permute(0, 2, 3, 1).contiguous()
    feat = feat.view(feat.size(0), -1, feat.size(3))
    feat = _gather_feat(feat, ind)
    return feat


def _nms(heat, kernel=3):
    pad = (kernel - 1) // 2
    hmax = nn.functional.max_pool2d(heat, (kernel, kernel), stride=1, padding=pad)
    keep = (hmax == heat).float()
    return heat * keep


def _topk(scores, K=40):
    batch, cat, height, width = scores.size()
    topk_scores, topk_inds = torch.topk(scores.view(batch, cat, -1), K)
    topk_inds = topk_inds % (height * width)
    topk_ys = (topk_inds / width).int().float()
    topk_xs = (topk_inds % width).int().float()
    topk_score, topk_ind = torch.topk(topk_scores.view(batch, -1), K)
    topk_clses = (topk_ind / K).int()
    topk_inds = _gather_feat(topk_inds.view(batch, -1, 1), topk_ind).view(batch, K)
    topk_ys = _gather_feat(topk_ys.view(batch, -1, 1), topk_ind).view(batch, K)
    topk_xs = _gather_feat(topk_xs.view(batch, -1, 1), topk_ind).view(batch, K)
    return topk_score, topk_inds, topk_clses, topk_ys, topk_xs


def ctdet_decode(heat, wh, reg=None, cat_spec_wh=False, K=100):
    batch, cat, height, width = heat.size()
    heat = _nms(heat)
    scores, inds, clses, ys, xs = _topk(heat, K=K)
    if reg is not None:
        reg = _transpose_and_gather_feat(reg, inds)
        reg = reg.view(batch, K, 2)
        xs = xs.view(batch, K, 1) + reg[:, :, 0:1]
        ys = ys.view(batch, K, 1) + reg[:, :, 1:2]
    else:
        xs = xs.view(batch, K, 1) + 0.5
        ys = ys.view(batch, K, 1) + 0.5
    wh = _transpose_and_gather_feat(wh, inds)
    wh = wh.view(batch, K, 2)
    clses = clses.view(batch, K, 1).float()
    scores = scores.view(batch, K, 1)
    bboxes = torch.cat([xs - wh[..., 0:1] / 2, ys - wh[..., 1:2] / 2,
                        xs + wh[..., 0:1] / 2, ys + wh[..., 1:2] / 2], dim=2)
    detections = torch.cat([bboxes, scores, clses], dim=2)
    return detections


class BasicBlock(nn.Module):
    def __init__(self, inplanes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes, momentum=0.1)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes, momentum=0.1)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride, bias=False),
                                            nn.BatchNorm2d(planes, momentum=0.1))

    def forward(self, x):
        residual = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            residual = self.downsample(x)
        out += residual
        return self.relu(out)


class PoseResNet(nn.Module):
    def __init__(self, heads, head_conv=16):
        super().__init__()
        self.inplanes = 16
        self.heads = heads
        self.conv1 = nn.Conv2d(3, 16, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(16, momentum=0.1)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = BasicBlock(16, 16)
        self.layer2 = BasicBlock(16, 32, 2)
        self.layer3 = BasicBlock(32, 48, 2)
        self.inplanes = 48
        self.deconv_layers = self._make_deconv_layer(2, [32, 24], [4, 4])
        for head in sorted(self.heads):
            num_output = self.heads[head]
            fc = nn.Sequential(nn.Conv2d(24, head_conv, kernel_size=3, padding=1, bias=True),
                               nn.ReLU(inplace=True),
                               nn.Conv2d(head_conv, num_output, kernel_size=1, stride=1, padding=0))
            if "hm" in head:
                fc[-1].bias.data.fill_(-2.19)
            self.__setattr__(head, fc)

    def _get_deconv_cfg(self, deconv_kernel):
        if deconv_kernel == 4:
            padding, output_padding = 1, 0
        elif deconv_kernel == 3:
            padding, output_padding = 1, 1
        else:
            padding, output_padding = 0, 0
        return deconv_kernel, padding, output_padding

    def _make_deconv_layer(self, num_layers, num_filters, num_kernels):
        layers = []
        for i in range(num_layers):
            kernel, padding, output_padding = self._get_deconv_cfg(num_kernels[i])
            planes = num_filters[i]
            layers.append(nn.ConvTranspose2d(self.inplanes, planes, kernel,
                                             stride=2, padding=padding, output_padding=output_padding,
                                             bias=False))
            layers.append(nn.BatchNorm2d(planes, momentum=0.1))
            layers.append(nn.ReLU(inplace=True))
            self.inplanes = planes
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer3(self.layer2(self.layer1(x)))
        x = self.deconv_layers(x)
        ret = {}
        for head in self.heads:
            ret[head] = self.__getattr__(head)(x)
        return [ret]


class CtdetDetector(nn.Module):
    def __init__(self, num_classes=3, K=20):
        super().__init__()
        self.model = PoseResNet({"hm": num_classes, "wh": 2, "reg": 2})
        self.K = K

    def forward(self, images):
        output = self.model(images)[-1]
        hm = output["hm"].sigmoid_()
        wh = output["wh"]
        reg = output["reg"]
        dets = ctdet_decode(hm, wh, reg=reg, K=self.K)
        return output, dets


torch.manual_seed(0)
model = CtdetDetector().eval()


def example_inputs():
    return torch.randn(2, 3, 64, 64, generator=torch.Generator().manual_seed(1))
