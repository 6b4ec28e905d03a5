"""SegNet as the pytorch SegNet ports write it (and ENet's upsampling
bottleneck): an encoder of conv-BN-ReLU stages each ending in
`F.max_pool2d(..., return_indices=True)`, the pooling indices and the
pre-pool sizes kept in Python lists, a decoder that walks them reversed
with `F.max_unpool2d(x, indices, kernel_size=2, stride=2, output_size=size)`,
an ENet-style `nn.MaxUnpool2d` module on the last stage, per-pixel class
scores and a `F.cross_entropy` with `ignore_index=255` over a label map."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def conv_bn_relu(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class SegNet(nn.Module):
    def __init__(self, in_ch=3, classes=5, widths=(8, 16, 24)):
        super().__init__()
        chans = [in_ch] + list(widths)
        self.enc = nn.ModuleList(
            nn.Sequential(conv_bn_relu(chans[i], chans[i + 1]), conv_bn_relu(chans[i + 1], chans[i + 1]))
            for i in range(len(widths)))
        dec = []
        for i in reversed(range(len(widths))):
            out = chans[i] if i > 0 else widths[0]
            dec.append(nn.Sequential(conv_bn_relu(chans[i + 1], chans[i + 1]), conv_bn_relu(chans[i + 1], out)))
        self.dec = nn.ModuleList(dec)
        self.unpool_last = nn.MaxUnpool2d(kernel_size=2, stride=2)
        self.classifier = nn.Conv2d(widths[0], classes, 1)

    def forward(self, x, labels=None):
        indices, sizes = [], []
        for stage in self.enc:
            x = stage(x)
            sizes.append(x.size())
            x, idx = F.max_pool2d(x, kernel_size=2, stride=2, return_indices=True)
            indices.append(idx)
        for i, stage in enumerate(self.dec):
            idx, size = indices.pop(), sizes.pop()
            if i == len(self.dec) - 1:
                x = self.unpool_last(x, idx, output_size=size)
            else:
                x = F.max_unpool2d(x, idx, kernel_size=2, stride=2, output_size=size)
            x = stage(x)
        logits = self.classifier(x)
        if labels is None:
            return logits
        loss = F.cross_entropy(logits, labels, ignore_index=255)
        return logits, loss


torch.manual_seed(0)
model = SegNet().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    labels = torch.randint(0, 5, (2, 24, 20), generator=g)
    labels[:, :3] = 255
    return torch.randn(2, 3, 24, 20, generator=g), labels
