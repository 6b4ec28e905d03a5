"""Operators torch gives Python kernels for the autograd keys, in training:
batch norm, bicubic and bilinear upsampling, an LSTM."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.norm = nn.BatchNorm2d(4)
        self.rnn = nn.LSTM(4, 6, batch_first=True)

    def forward(self, x):
        y = self.norm(self.conv(x))
        y = F.interpolate(y, scale_factor=2.0, mode="bicubic", align_corners=False)
        y = F.interpolate(y, size=(4, 4), mode="bilinear", align_corners=False)
        out, _ = self.rnn(y.flatten(2).transpose(1, 2))
        return out


def build():
    torch.manual_seed(0)
    return Net()


def example_inputs():
    torch.manual_seed(1)
    return (torch.randn(2, 3, 4, 4),)
