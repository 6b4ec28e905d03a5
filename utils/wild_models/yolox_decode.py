"""YOLOX as Megvii's yolo_head.py writes it at inference: decoupled heads
(a 1x1 stem, then separate cls and reg conv branches with BaseConv =
Conv + BN + SiLU), per-level outputs cat([reg, obj.sigmoid(),
cls.sigmoid()]), flattened and concatenated across levels, then
decode_outputs: grids by torch.meshgrid([torch.arange(hsize),
torch.arange(wsize)]) stacked as (xv, yv), strides by torch.full,
`outputs[..., :2] = (outputs[..., :2] + grids) * strides` and
`outputs[..., 2:4] = torch.exp(outputs[..., 2:4]) * strides` written in
place; the head bias initialised from a prior probability; the hw list
and decode flag kept on the module."""
import math

import torch
import torch.nn as nn


class BaseConv(nn.Module):
    def __init__(self, in_channels, out_channels, ksize, stride, groups=1, bias=False):
        super().__init__()
        pad = (ksize - 1) // 2
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=ksize, stride=stride, padding=pad,
                              groups=groups, bias=bias)
        self.bn = nn.BatchNorm2d(out_channels)
        self.act = nn.SiLU(inplace=True)

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class YOLOXHead(nn.Module):
    def __init__(self, num_classes=4, width=0.25, strides=(8, 16, 32), in_channels=(64, 128, 256)):
        super().__init__()
        self.num_classes = num_classes
        self.decode_in_inference = True
        self.cls_convs = nn.ModuleList()
        self.reg_convs = nn.ModuleList()
        self.cls_preds = nn.ModuleList()
        self.reg_preds = nn.ModuleList()
        self.obj_preds = nn.ModuleList()
        self.stems = nn.ModuleList()
        hidden = int(64 * width)
        for i in range(len(in_channels)):
            self.stems.append(BaseConv(int(in_channels[i] * width), hidden, ksize=1, stride=1))
            self.cls_convs.append(nn.Sequential(BaseConv(hidden, hidden, 3, 1), BaseConv(hidden, hidden, 3, 1)))
            self.reg_convs.append(nn.Sequential(BaseConv(hidden, hidden, 3, 1), BaseConv(hidden, hidden, 3, 1)))
            self.cls_preds.append(nn.Conv2d(hidden, self.num_classes, 1, 1, 0))
            self.reg_preds.append(nn.Conv2d(hidden, 4, 1, 1, 0))
            self.obj_preds.append(nn.Conv2d(hidden, 1, 1, 1, 0))
        self.strides = strides
        self.grids = [torch.zeros(1)] * len(in_channels)

    def initialize_biases(self, prior_prob):
        for conv in self.cls_preds:
            b = conv.bias.view(1, -1)
            b.data.fill_(-math.log((1 - prior_prob) / prior_prob))
            conv.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)
        for conv in self.obj_preds:
            b = conv.bias.view(1, -1)
            b.data.fill_(-math.log((1 - prior_prob) / prior_prob))
            conv.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)

    def forward(self, xin):
        outputs = []
        for k, (cls_conv, reg_conv, stride_this_level, x) in enumerate(
                zip(self.cls_convs, self.reg_convs, self.strides, xin)):
            x = self.stems[k](x)
            cls_x = x
            reg_x = x
            cls_feat = cls_conv(cls_x)
            cls_output = self.cls_preds[k](cls_feat)
            reg_feat = reg_conv(reg_x)
            reg_output = self.reg_preds[k](reg_feat)
            obj_output = self.obj_preds[k](reg_feat)
            output = torch.cat([reg_output, obj_output.sigmoid(), cls_output.sigmoid()], 1)
            outputs.append(output)
        self.hw = [x.shape[-2:] for x in outputs]
        outputs = torch.cat([x.flatten(start_dim=2) for x in outputs], dim=2).permute(0, 2, 1)
        if self.decode_in_inference:
            return self.decode_outputs(outputs, dtype=xin[0].type())
        return outputs

    def decode_outputs(self, outputs, dtype):
        grids = []
        strides = []
        for (hsize, wsize), stride in zip(self.hw, self.strides):
            yv, xv = torch.meshgrid([torch.arange(hsize), torch.arange(wsize)], indexing="ij")
            grid = torch.stack((xv, yv), 2).view(1, -1, 2)
            grids.append(grid)
            shape = grid.shape[:2]
            strides.append(torch.full((*shape, 1), stride))
        grids = torch.cat(grids, dim=1).type(dtype)
        strides = torch.cat(strides, dim=1).type(dtype)
        outputs[..., :2] = (outputs[..., :2] + grids) * strides
        outputs[..., 2:4] = torch.exp(outputs[..., 2:4]) * strides
        return outputs


class YOLOX(nn.Module):
    def __init__(self, width=0.25):
        super().__init__()
        chans = [int(c * width) for c in (64, 128, 256)]
        self.stem = BaseConv(3, chans[0] // 2, 3, 2)
        self.dark3 = nn.Sequential(BaseConv(chans[0] // 2, chans[0], 3, 2), BaseConv(chans[0], chans[0], 3, 2))
        self.dark4 = BaseConv(chans[0], chans[1], 3, 2)
        self.dark5 = BaseConv(chans[1], chans[2], 3, 2)
        self.head = YOLOXHead(width=width)
        self.head.initialize_biases(1e-2)

    def forward(self, x):
        x = self.stem(x)
        c3 = self.dark3(x)
        c4 = self.dark4(c3)
        c5 = self.dark5(c4)
        return self.head((c3, c4, c5))


torch.manual_seed(0)
model = YOLOX().eval()


def example_inputs():
    return torch.randn(2, 3, 64, 64, generator=torch.Generator().manual_seed(1))
