# A graph that records autograd keeps each operator eager's autograd sees:
# torch's Python kernels for the autograd keys (upsampling, batch norm, the
# recurrent layers) decompose those operators above autograd, which eager
# never does, so the variant with grad records the operators whole and
# their backward is eager's own. The variant without grad may decompose.
# RUN: %dync export %s:Net.forward -o %t.so
# RUN: %dync inspect %t.so | FileCheck %s
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.norm = nn.BatchNorm2d(4)
        self.rnn = nn.LSTM(4, 6, batch_first=True)

    def forward(self, x):
        y = self.norm(self.conv(x))
        y = F.interpolate(y, scale_factor=2.0, mode="bicubic", align_corners=False)
        y = F.interpolate(y, size=(4, 4), mode="bilinear", align_corners=False)
        out, _ = self.rnn(y.flatten(2).transpose(1, 2))
        return out


def example_inputs():
    return (torch.randn(2, 3, 4, 4),)


# CHECK-LABEL: graph @Net.forward$grad(
# CHECK-NOT:   {{^}}graph
# CHECK:       aten::native_batch_norm.default(
# CHECK-NOT:   {{^}}graph
# CHECK:       aten::upsample_bicubic2d.default(
# CHECK-NOT:   {{^}}graph
# CHECK:       aten::upsample_bilinear2d.default(
# CHECK-NOT:   {{^}}graph
# CHECK:       aten::mkldnn_rnn_layer.default(
# CHECK:       {{^}}}
