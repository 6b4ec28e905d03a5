"""DeepLabV3+ as the torchvision/jfzhang95 ports write it, trained with
mmsegmentation's OHEM pixel sampler: an `_ASPP` of 1x1, three atrous 3x3
branches built in a loop over `atrous_rates` and an image-pooling branch
(`ASPPPooling(nn.Sequential)` whose forward loops `for mod in self` and
interpolates back to `x.shape[-2:]`), depthwise-separable convs, a decoder
upsampling by `F.interpolate(..., size=low_level_feat.size()[2:],
mode='bilinear', align_corners=True)`; the loss is `OHEMPixelSampler.sample`
under `torch.no_grad()`: `seg_label.squeeze(1).long()`, the valid mask from
`ignore_index`, `batch_kept = min_kept * seg_label.size(0)`, the softmax
probability of the label gathered after `seg_label.clone()` with ignored
pixels set to 0, a `.sort()` to find the threshold, `max(threshold,
self.thresh)` and the weight mask written by boolean indexing; then a
weighted cross entropy with `ignore_index` averaged by `avg_non_ignore`."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ASPPConv(nn.Sequential):
    def __init__(self, in_channels, out_channels, dilation):
        modules = [
            nn.Conv2d(in_channels, out_channels, 3, padding=dilation, dilation=dilation, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
        ]
        super().__init__(*modules)


class ASPPPooling(nn.Sequential):
    def __init__(self, in_channels, out_channels):
        super().__init__(
            nn.AdaptiveAvgPool2d(1),
            nn.Conv2d(in_channels, out_channels, 1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
        )

    def forward(self, x):
        size = x.shape[-2:]
        for mod in self:
            x = mod(x)
        return F.interpolate(x, size=size, mode="bilinear", align_corners=False)


class ASPP(nn.Module):
    def __init__(self, in_channels, atrous_rates, out_channels=256):
        super().__init__()
        modules = []
        modules.append(nn.Sequential(nn.Conv2d(in_channels, out_channels, 1, bias=False),
                                     nn.BatchNorm2d(out_channels), nn.ReLU()))
        rates = tuple(atrous_rates)
        for rate in rates:
            modules.append(ASPPConv(in_channels, out_channels, rate))
        modules.append(ASPPPooling(in_channels, out_channels))
        self.convs = nn.ModuleList(modules)
        self.project = nn.Sequential(
            nn.Conv2d(len(self.convs) * out_channels, out_channels, 1, bias=False),
            nn.BatchNorm2d(out_channels), nn.ReLU(), nn.Dropout(0.5))

    def forward(self, x):
        _res = []
        for conv in self.convs:
            _res.append(conv(x))
        res = torch.cat(_res, dim=1)
        return self.project(res)


class SeparableConv2d(nn.Module):
    def __init__(self, inplanes, planes, kernel_size=3, stride=1, dilation=1, bias=False, BatchNorm=nn.BatchNorm2d):
        super(SeparableConv2d, self).__init__()
        self.conv1 = nn.Conv2d(inplanes, inplanes, kernel_size, stride, dilation * (kernel_size // 2), dilation,
                               groups=inplanes, bias=bias)
        self.bn = BatchNorm(inplanes)
        self.pointwise = nn.Conv2d(inplanes, planes, 1, 1, 0, 1, 1, bias=bias)

    def forward(self, x):
        return self.pointwise(self.bn(self.conv1(x)))


class Backbone(nn.Module):
    """A small output-stride-8 encoder returning (out, low_level_feat)."""
    def __init__(self, width=16):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, 2, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(True))
        self.layer1 = nn.Sequential(SeparableConv2d(width, width * 2, stride=2), nn.BatchNorm2d(width * 2),
                                    nn.ReLU(True))
        self.layer2 = nn.Sequential(SeparableConv2d(width * 2, width * 4, stride=2), nn.BatchNorm2d(width * 4),
                                    nn.ReLU(True))
        self.layer3 = nn.Sequential(SeparableConv2d(width * 4, width * 4, dilation=2), nn.BatchNorm2d(width * 4),
                                    nn.ReLU(True))

    def forward(self, x):
        x = self.stem(x)
        low_level_feat = self.layer1(x)
        x = self.layer3(self.layer2(low_level_feat))
        return x, low_level_feat


class Decoder(nn.Module):
    def __init__(self, num_classes, low_level_inplanes, aspp_channels):
        super(Decoder, self).__init__()
        self.conv1 = nn.Conv2d(low_level_inplanes, 12, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(12)
        self.relu = nn.ReLU()
        self.last_conv = nn.Sequential(
            nn.Conv2d(aspp_channels + 12, aspp_channels, kernel_size=3, stride=1, padding=1, bias=False),
            nn.BatchNorm2d(aspp_channels), nn.ReLU(), nn.Dropout(0.5),
            nn.Conv2d(aspp_channels, aspp_channels, kernel_size=3, stride=1, padding=1, bias=False),
            nn.BatchNorm2d(aspp_channels), nn.ReLU(), nn.Dropout(0.1),
            nn.Conv2d(aspp_channels, num_classes, kernel_size=1, stride=1))

    def forward(self, x, low_level_feat):
        low_level_feat = self.relu(self.bn1(self.conv1(low_level_feat)))
        x = F.interpolate(x, size=low_level_feat.size()[2:], mode="bilinear", align_corners=True)
        x = torch.cat((x, low_level_feat), dim=1)
        return self.last_conv(x)


class OHEMPixelSampler:
    def __init__(self, context, thresh=None, min_kept=100000):
        assert min_kept > 1
        self.context = context
        self.thresh = thresh
        self.min_kept = min_kept

    def sample(self, seg_logit, seg_label):
        with torch.no_grad():
            assert seg_logit.shape[2:] == seg_label.shape[2:]
            assert seg_label.shape[1] == 1
            seg_label = seg_label.squeeze(1).long()
            batch_kept = self.min_kept * seg_label.size(0)
            valid_mask = seg_label != self.context.ignore_index
            seg_weight = seg_logit.new_zeros(size=seg_label.size())
            valid_seg_weight = seg_weight[valid_mask]
            if self.thresh is not None:
                seg_prob = F.softmax(seg_logit, dim=1)
                tmp_seg_label = seg_label.clone().unsqueeze(1)
                tmp_seg_label[tmp_seg_label == self.context.ignore_index] = 0
                seg_prob = seg_prob.gather(1, tmp_seg_label).squeeze(1)
                sort_prob, sort_indices = seg_prob[valid_mask].sort()
                if sort_prob.numel() > 0:
                    min_threshold = sort_prob[min(batch_kept, sort_prob.numel() - 1)]
                else:
                    min_threshold = 0.0
                threshold = max(min_threshold, self.thresh)
                valid_seg_weight[seg_prob[valid_mask] < threshold] = 1.
            else:
                losses = F.cross_entropy(seg_logit, seg_label, ignore_index=self.context.ignore_index,
                                         reduction="none")
                _, sort_indices = losses[valid_mask].sort(descending=True)
                valid_seg_weight[sort_indices[:batch_kept]] = 1.
            seg_weight[valid_mask] = valid_seg_weight
            return seg_weight


def weight_reduce_loss(loss, weight=None, reduction="mean", avg_factor=None):
    if weight is not None:
        loss = loss * weight
    if avg_factor is None:
        return loss.mean() if reduction == "mean" else loss.sum()
    eps = torch.finfo(torch.float32).eps
    return loss.sum() / (avg_factor + eps)


class DeepLabV3Plus(nn.Module):
    def __init__(self, num_classes=6, ignore_index=255, avg_non_ignore=True):
        super().__init__()
        self.backbone = Backbone()
        self.aspp = ASPP(64, [2, 4, 6], out_channels=32)
        self.decoder = Decoder(num_classes, 32, 32)
        self.ignore_index = ignore_index
        self.avg_non_ignore = avg_non_ignore
        self.sampler = OHEMPixelSampler(context=self, thresh=0.7, min_kept=40)
        self.align_corners = False

    def forward(self, img, gt_semantic_seg=None):
        x, low_level_feat = self.backbone(img)
        x = self.aspp(x)
        x = self.decoder(x, low_level_feat)
        seg_logit = F.interpolate(x, size=img.size()[2:], mode="bilinear", align_corners=self.align_corners)
        if gt_semantic_seg is None:
            return seg_logit
        seg_weight = self.sampler.sample(seg_logit, gt_semantic_seg)
        seg_label = gt_semantic_seg.squeeze(1)
        loss = F.cross_entropy(seg_logit, seg_label, weight=None, reduction="none", ignore_index=self.ignore_index)
        avg_factor = None
        if self.avg_non_ignore:
            avg_factor = seg_label.numel() - (seg_label == self.ignore_index).sum().item()
        loss = weight_reduce_loss(loss, weight=seg_weight, reduction="mean", avg_factor=avg_factor)
        return dict(seg_logit=seg_logit, loss_ce=loss, acc_seg=(seg_logit.argmax(1) == seg_label).float().mean())


torch.manual_seed(0)
model = DeepLabV3Plus().eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    img = torch.randn(2, 3, 32, 32, generator=g)
    label = torch.randint(0, 6, (2, 1, 32, 32), generator=g)
    label[:, :, :4] = 255
    return (img, label)
