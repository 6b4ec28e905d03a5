"""PixelCNN as the well-known single-file PyTorch ports write it (e.g.
jzbontar/pixelcnn-pytorch): `MaskedConv2d(nn.Conv2d)` whose mask buffer
starts as `self.weight.data.clone()`, is filled with ones and zeroed
past the centre with a slice that adds the bool `mask_type == 'B'` to an
int, and whose forward multiplies the weight in place
(`self.weight.data *= self.mask`) before calling
`super(MaskedConv2d, self).forward(x)`; the network an `nn.Sequential`
of mask A then mask B convs with BatchNorm2d and ReLU, a 1x1 conv to 256
logits; the training step's target from `(input.data[:, 0] *
255).long()` and `F.cross_entropy`, plus a class-conditional bias in the
Gated-PixelCNN manner added by broadcasting an embedding."""
import torch
import torch.nn.functional as F
from torch import nn


class MaskedConv2d(nn.Conv2d):
    def __init__(self, mask_type, *args, **kwargs):
        super(MaskedConv2d, self).__init__(*args, **kwargs)
        assert mask_type in {"A", "B"}
        self.register_buffer("mask", self.weight.data.clone())
        _, _, kH, kW = self.weight.size()
        self.mask.fill_(1)
        self.mask[:, :, kH // 2, kW // 2 + (mask_type == "B"):] = 0
        self.mask[:, :, kH // 2 + 1:] = 0

    def forward(self, x):
        self.weight.data *= self.mask
        return super(MaskedConv2d, self).forward(x)


def make_net(fm=16, n_classes=10):
    return nn.Sequential(
        MaskedConv2d("A", 1, fm, 7, 1, 3, bias=False), nn.BatchNorm2d(fm), nn.ReLU(True),
        MaskedConv2d("B", fm, fm, 7, 1, 3, bias=False), nn.BatchNorm2d(fm), nn.ReLU(True),
        MaskedConv2d("B", fm, fm, 7, 1, 3, bias=False), nn.BatchNorm2d(fm), nn.ReLU(True),
        MaskedConv2d("B", fm, fm, 7, 1, 3, bias=False), nn.BatchNorm2d(fm), nn.ReLU(True),
        nn.Conv2d(fm, 256, 1),
    )


class ConditionalPixelCNN(nn.Module):
    def __init__(self, fm=16, n_classes=10):
        super().__init__()
        self.net = make_net(fm, n_classes)
        self.class_bias = nn.Embedding(n_classes, fm)

    def forward(self, input, labels):
        h = input
        bias = self.class_bias(labels)[:, :, None, None]
        for i, layer in enumerate(self.net):
            h = layer(h)
            if isinstance(layer, nn.BatchNorm2d) and i > 2:
                h = h + bias
        target = (input.data[:, 0] * 255).long()
        loss = F.cross_entropy(h, target)
        return h, loss


torch.manual_seed(0)
model = ConditionalPixelCNN()
with torch.no_grad():
    for _m in model.modules():
        if isinstance(_m, nn.BatchNorm2d):
            _m.running_mean.normal_(0, 0.1)
            _m.running_var.uniform_(0.5, 1.5)
model.eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    img = (torch.rand(2, 1, 8, 8, generator=g) > 0.5).float()
    return img, torch.tensor([3, 7])
