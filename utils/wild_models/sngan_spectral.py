"""An SN-GAN / BigGAN-style discriminator: every conv and linear wrapped
in `nn.utils.parametrizations.spectral_norm` (the parametrization API,
one power iteration per training step; in eval mode the stored `_u`/`_v`
vectors give sigma), residual `DBlock`s with a learnable 1x1 shortcut and
`F.avg_pool2d` downsampling, a final `torch.sum(h, dim=[2, 3])` global sum
pooling, and the projection discriminator's class term
`torch.sum(self.embed(y) * h, dim=1, keepdim=True)`; the hinge loss for
real and fake scores returned with the logits."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.parametrizations import spectral_norm


class DBlock(nn.Module):
    def __init__(self, in_ch, out_ch, downsample=True, preactivation=True):
        super().__init__()
        self.conv1 = spectral_norm(nn.Conv2d(in_ch, out_ch, 3, padding=1))
        self.conv2 = spectral_norm(nn.Conv2d(out_ch, out_ch, 3, padding=1))
        self.learnable_sc = in_ch != out_ch or downsample
        if self.learnable_sc:
            self.conv_sc = spectral_norm(nn.Conv2d(in_ch, out_ch, 1))
        self.downsample = downsample
        self.preactivation = preactivation

    def shortcut(self, x):
        if self.preactivation:
            if self.learnable_sc:
                x = self.conv_sc(x)
            if self.downsample:
                x = F.avg_pool2d(x, 2)
        else:
            if self.downsample:
                x = F.avg_pool2d(x, 2)
            if self.learnable_sc:
                x = self.conv_sc(x)
        return x

    def forward(self, x):
        h = F.relu(x) if self.preactivation else x
        h = self.conv1(h)
        h = self.conv2(F.relu(h))
        if self.downsample:
            h = F.avg_pool2d(h, 2)
        return h + self.shortcut(x)


class SNDiscriminator(nn.Module):
    def __init__(self, ch=16, n_classes=10):
        super().__init__()
        self.blocks = nn.Sequential(DBlock(3, ch, preactivation=False), DBlock(ch, 2 * ch),
                                    DBlock(2 * ch, 2 * ch, downsample=False))
        self.linear = spectral_norm(nn.Linear(2 * ch, 1))
        self.embed = spectral_norm(nn.Embedding(n_classes, 2 * ch))

    def forward(self, x, y, fake):
        both = torch.cat([x, fake], 0)
        h = self.blocks(both)
        h = torch.sum(F.relu(h), dim=[2, 3])
        out = self.linear(h)
        yy = torch.cat([y, y], 0)
        out = out + torch.sum(self.embed(yy) * h, dim=1, keepdim=True)
        d_real, d_fake = torch.split(out, [x.shape[0], fake.shape[0]])
        loss_real = torch.mean(F.relu(1.0 - d_real))
        loss_fake = torch.mean(F.relu(1.0 + d_fake))
        return out, loss_real + loss_fake


torch.manual_seed(0)
model = SNDiscriminator()
# A few power iterations in training mode first, as a trained checkpoint would have.
with torch.no_grad():
    for _ in range(3):
        model(torch.randn(2, 3, 16, 16), torch.tensor([1, 2]), torch.randn(2, 3, 16, 16))
model = model.eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randn(3, 3, 16, 16, generator=g), torch.tensor([0, 4, 9]), torch.randn(3, 3, 16, 16, generator=g)
