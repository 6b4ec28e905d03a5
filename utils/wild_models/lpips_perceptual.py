"""LPIPS as richzhang/PerceptualSimilarity writes it: a `ScalingLayer`
holding shift/scale as buffers `[None, :, None, None]`, a VGG-style trunk
split into slices by `for x in range(4): self.slice1.add_module(str(x),
features[x])`, the slices' outputs returned as a `namedtuple("VggOutputs",
[...])`, `normalize_tensor(in_feat, eps)` by the channel L2 norm,
`NetLinLayer`s of Dropout + 1x1 conv without bias kept in an
`nn.ModuleList`, `spatial_average(in_tens, keepdim=True)` or
`upsample(..., out_HW=in0.shape[2:])` chosen by a `spatial` flag, the
per-layer distances accumulated by `val += res[l]` over `range(self.L)`,
an optional `retPerLayer`, and `normalize=True` mapping [0, 1] images to
[-1, 1] first; used as the perceptual term of an image-restoration loss
next to an L1 term, with gradients to the restoration network."""
from collections import namedtuple

import torch
import torch.nn as nn


def normalize_tensor(in_feat, eps=1e-10):
    norm_factor = torch.sqrt(torch.sum(in_feat ** 2, dim=1, keepdim=True))
    return in_feat / (norm_factor + eps)


def spatial_average(in_tens, keepdim=True):
    return in_tens.mean([2, 3], keepdim=keepdim)


def upsample(in_tens, out_HW=(64, 64)):
    return nn.Upsample(size=out_HW, mode="bilinear", align_corners=False)(in_tens)


class ScalingLayer(nn.Module):
    def __init__(self):
        super(ScalingLayer, self).__init__()
        self.register_buffer("shift", torch.Tensor([-.030, -.088, -.188])[None, :, None, None])
        self.register_buffer("scale", torch.Tensor([.458, .448, .450])[None, :, None, None])

    def forward(self, inp):
        return (inp - self.shift) / self.scale


class NetLinLayer(nn.Module):
    def __init__(self, chn_in, chn_out=1, use_dropout=False):
        super(NetLinLayer, self).__init__()
        layers = [nn.Dropout(), ] if use_dropout else []
        layers += [nn.Conv2d(chn_in, chn_out, 1, stride=1, padding=0, bias=False), ]
        self.model = nn.Sequential(*layers)

    def forward(self, x):
        return self.model(x)


def make_features(cfg):
    layers = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
        else:
            layers += [nn.Conv2d(in_channels, v, kernel_size=3, padding=1), nn.ReLU(inplace=True)]
            in_channels = v
    return nn.Sequential(*layers)


class vgg_tiny(nn.Module):
    def __init__(self, requires_grad=False):
        super(vgg_tiny, self).__init__()
        vgg_pretrained_features = make_features([8, 8, "M", 16, 16, "M", 24, "M", 32])
        self.slice1 = nn.Sequential()
        self.slice2 = nn.Sequential()
        self.slice3 = nn.Sequential()
        self.slice4 = nn.Sequential()
        self.N_slices = 4
        for x in range(4):
            self.slice1.add_module(str(x), vgg_pretrained_features[x])
        for x in range(4, 9):
            self.slice2.add_module(str(x), vgg_pretrained_features[x])
        for x in range(9, 12):
            self.slice3.add_module(str(x), vgg_pretrained_features[x])
        for x in range(12, 15):
            self.slice4.add_module(str(x), vgg_pretrained_features[x])
        if not requires_grad:
            for param in self.parameters():
                param.requires_grad = False

    def forward(self, X):
        h = self.slice1(X)
        h_relu1_2 = h
        h = self.slice2(h)
        h_relu2_2 = h
        h = self.slice3(h)
        h_relu3_3 = h
        h = self.slice4(h)
        h_relu4_3 = h
        vgg_outputs = namedtuple("VggOutputs", ["relu1_2", "relu2_2", "relu3_3", "relu4_3"])
        return vgg_outputs(h_relu1_2, h_relu2_2, h_relu3_3, h_relu4_3)


class LPIPS(nn.Module):
    def __init__(self, net="vgg", version="0.1", lpips=True, spatial=False, use_dropout=True):
        super(LPIPS, self).__init__()
        self.pnet_type = net
        self.spatial = spatial
        self.lpips = lpips
        self.version = version
        self.scaling_layer = ScalingLayer()
        if self.pnet_type in ["vgg", "vgg16"]:
            net_type = vgg_tiny
            self.chns = [8, 16, 24, 32]
        self.L = len(self.chns)
        self.net = net_type(requires_grad=False)
        if lpips:
            self.lin0 = NetLinLayer(self.chns[0], use_dropout=use_dropout)
            self.lin1 = NetLinLayer(self.chns[1], use_dropout=use_dropout)
            self.lin2 = NetLinLayer(self.chns[2], use_dropout=use_dropout)
            self.lin3 = NetLinLayer(self.chns[3], use_dropout=use_dropout)
            self.lins = nn.ModuleList([self.lin0, self.lin1, self.lin2, self.lin3])
            for lin in self.lins:
                lin.model[-1].weight.data.abs_()
                for p in lin.parameters():
                    p.requires_grad = False

    def forward(self, in0, in1, retPerLayer=False, normalize=False):
        if normalize:
            in0 = 2 * in0 - 1
            in1 = 2 * in1 - 1
        in0_input, in1_input = (self.scaling_layer(in0), self.scaling_layer(in1)) if self.version == "0.1" \
            else (in0, in1)
        outs0, outs1 = self.net.forward(in0_input), self.net.forward(in1_input)
        feats0, feats1, diffs = {}, {}, {}
        for kk in range(self.L):
            feats0[kk], feats1[kk] = normalize_tensor(outs0[kk]), normalize_tensor(outs1[kk])
            diffs[kk] = (feats0[kk] - feats1[kk]) ** 2
        if self.lpips:
            if self.spatial:
                res = [upsample(self.lins[kk](diffs[kk]), out_HW=in0.shape[2:]) for kk in range(self.L)]
            else:
                res = [spatial_average(self.lins[kk](diffs[kk]), keepdim=True) for kk in range(self.L)]
        else:
            if self.spatial:
                res = [upsample(diffs[kk].sum(dim=1, keepdim=True), out_HW=in0.shape[2:]) for kk in range(self.L)]
            else:
                res = [spatial_average(diffs[kk].sum(dim=1, keepdim=True), keepdim=True) for kk in range(self.L)]
        val = 0
        for l in range(self.L):
            val += res[l]
        if retPerLayer:
            return (val, res)
        else:
            return val


class RestorationWithPerceptualLoss(nn.Module):
    """A small denoiser trained with L1 + lambda * LPIPS, as restoration repos do."""
    def __init__(self, lambda_lpips=0.5):
        super().__init__()
        self.restorer = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(True), nn.Conv2d(16, 16, 3, padding=1),
                                      nn.ReLU(True), nn.Conv2d(16, 3, 3, padding=1))
        self.loss_fn = LPIPS(net="vgg", spatial=False)
        self.loss_fn_spatial = LPIPS(net="vgg", spatial=True)
        self.loss_fn_spatial.load_state_dict(self.loss_fn.state_dict())
        self.lambda_lpips = lambda_lpips

    def forward(self, noisy, clean):
        restored = (noisy + self.restorer(noisy)).clamp(0, 1)
        l1 = (restored - clean).abs().mean()
        perceptual, per_layer = self.loss_fn(restored, clean, retPerLayer=True, normalize=True)
        dist_map = self.loss_fn_spatial(restored, clean, normalize=True)
        loss = l1 + self.lambda_lpips * perceptual.mean()
        return loss, torch.cat(per_layer, 1).flatten(1), dist_map


torch.manual_seed(0)
model = RestorationWithPerceptualLoss().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    clean = torch.rand(2, 3, 32, 32, generator=g)
    return ((clean + 0.1 * torch.randn(2, 3, 32, 32, generator=g)).clamp(0, 1), clean)
