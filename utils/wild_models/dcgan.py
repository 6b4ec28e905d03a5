"""DCGAN as the PyTorch examples write it: a generator of ConvTranspose2d
/ BatchNorm2d / ReLU layers ending in Tanh from a latent of shape
(N, nz, 1, 1), a discriminator of strided convs with LeakyReLU and a
Sigmoid, `weights_init` applied by `model.apply`, `.view(-1, 1).squeeze(1)`
on the discriminator's output, and the BCE losses of both players computed
in one forward with `fake.detach()` for the discriminator's step."""
import torch
import torch.nn as nn

nc, nz, ngf, ndf = 3, 16, 8, 8


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        torch.nn.init.normal_(m.weight, 0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        torch.nn.init.normal_(m.weight, 1.0, 0.02)
        torch.nn.init.zeros_(m.bias)


class Generator(nn.Module):
    def __init__(self, ngpu=1):
        super().__init__()
        self.ngpu = ngpu
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 4),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False),
            nn.Tanh())

    def forward(self, input):
        if input.is_cuda and self.ngpu > 1:
            output = nn.parallel.data_parallel(self.main, input, range(self.ngpu))
        else:
            output = self.main(input)
        return output


class Discriminator(nn.Module):
    def __init__(self, ngpu=1):
        super().__init__()
        self.ngpu = ngpu
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 4),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 4, 1, 4, 1, 0, bias=False),
            nn.Sigmoid())

    def forward(self, input):
        output = self.main(input)
        return output.view(-1, 1).squeeze(1)


class GAN(nn.Module):
    """Both players and their losses, as one training step computes them."""

    def __init__(self):
        super().__init__()
        self.netG = Generator()
        self.netG.apply(weights_init)
        self.netD = Discriminator()
        self.netD.apply(weights_init)
        self.criterion = nn.BCELoss()
        self.real_label = 1.
        self.fake_label = 0.

    def forward(self, real, noise):
        batch_size = real.size(0)
        label = torch.full((batch_size,), self.real_label, dtype=real.dtype, device=real.device)
        output = self.netD(real)
        errD_real = self.criterion(output, label)
        fake = self.netG(noise)
        # The example refills one label tensor between backward calls; one
        # forward for both players refills a copy, since the BCE above
        # saved `label` for its backward.
        fake_label = label.clone().fill_(self.fake_label)
        output = self.netD(fake.detach())
        errD_fake = self.criterion(output, fake_label)
        errD = errD_real + errD_fake
        output = self.netD(fake)
        errG = self.criterion(output, label)
        D_G_z = output.mean().item()
        return fake, errD, errG, D_G_z


torch.manual_seed(0)
model = GAN().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.rand(4, nc, 32, 32, generator=g) * 2 - 1, torch.randn(4, nz, 1, 1, generator=g))
