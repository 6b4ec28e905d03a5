"""One WGAN training step as martinarjovsky/WassersteinGAN's `main.py` and
its DCGAN models write it: the critic's parameters switched on with
`for p in netD.parameters(): p.requires_grad = True` (they were switched
off for the generator's update), weights clipped in place by
`p.data.clamp_(clamp_lower, clamp_upper)`, critic outputs averaged by
`output.mean(0).view(1)`, `errD = errD_real - errD_fake` with the fake
batch `detach()`ed, the critic frozen again before the generator's
`errG`, `one`/`mone` tensors kept for `backward(one)` in the original
(returned here), the generator a `nn.Sequential` built with `add_module`
and string names (`'initial:{0}-{1}:convt'.format(nz, cngf)`), and the
noise passed in (its `normal_(0, 1)` refill in the loop)."""
import torch
import torch.nn as nn


class DCGAN_D(nn.Module):
    def __init__(self, isize, nc, ndf, n_extra_layers=0):
        super().__init__()
        assert isize % 16 == 0, "isize has to be a multiple of 16"
        main = nn.Sequential()
        main.add_module("initial:{0}-{1}:conv".format(nc, ndf), nn.Conv2d(nc, ndf, 4, 2, 1, bias=False))
        main.add_module("initial:{0}:relu".format(ndf), nn.LeakyReLU(0.2, inplace=True))
        csize, cndf = isize / 2, ndf
        for t in range(n_extra_layers):
            main.add_module("extra-layers-{0}:{1}:conv".format(t, cndf), nn.Conv2d(cndf, cndf, 3, 1, 1, bias=False))
            main.add_module("extra-layers-{0}:{1}:batchnorm".format(t, cndf), nn.BatchNorm2d(cndf))
            main.add_module("extra-layers-{0}:{1}:relu".format(t, cndf), nn.LeakyReLU(0.2, inplace=True))
        while csize > 4:
            in_feat = cndf
            out_feat = cndf * 2
            main.add_module("pyramid:{0}-{1}:conv".format(in_feat, out_feat),
                            nn.Conv2d(in_feat, out_feat, 4, 2, 1, bias=False))
            main.add_module("pyramid:{0}:batchnorm".format(out_feat), nn.BatchNorm2d(out_feat))
            main.add_module("pyramid:{0}:relu".format(out_feat), nn.LeakyReLU(0.2, inplace=True))
            cndf = cndf * 2
            csize = csize / 2
        main.add_module("final:{0}-{1}:conv".format(cndf, 1), nn.Conv2d(cndf, 1, 4, 1, 0, bias=False))
        self.main = main

    def forward(self, input):
        output = self.main(input)
        output = output.mean(0)
        return output.view(1)


class DCGAN_G(nn.Module):
    def __init__(self, isize, nz, nc, ngf):
        super().__init__()
        assert isize % 16 == 0, "isize has to be a multiple of 16"
        cngf, tisize = ngf // 2, 4
        while tisize != isize:
            cngf = cngf * 2
            tisize = tisize * 2
        main = nn.Sequential()
        main.add_module("initial:{0}-{1}:convt".format(nz, cngf), nn.ConvTranspose2d(nz, cngf, 4, 1, 0, bias=False))
        main.add_module("initial:{0}:batchnorm".format(cngf), nn.BatchNorm2d(cngf))
        main.add_module("initial:{0}:relu".format(cngf), nn.ReLU(True))
        csize = 4
        while csize < isize // 2:
            main.add_module("pyramid:{0}-{1}:convt".format(cngf, cngf // 2),
                            nn.ConvTranspose2d(cngf, cngf // 2, 4, 2, 1, bias=False))
            main.add_module("pyramid:{0}:batchnorm".format(cngf // 2), nn.BatchNorm2d(cngf // 2))
            main.add_module("pyramid:{0}:relu".format(cngf // 2), nn.ReLU(True))
            cngf = cngf // 2
            csize = csize * 2
        main.add_module("final:{0}-{1}:convt".format(cngf, nc), nn.ConvTranspose2d(cngf, nc, 4, 2, 1, bias=False))
        main.add_module("final:{0}:tanh".format(nc), nn.Tanh())
        self.main = main

    def forward(self, input):
        return self.main(input)


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        m.weight.data.normal_(0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        m.weight.data.normal_(1.0, 0.02)
        m.bias.data.fill_(0)


class WGANStep(nn.Module):
    def __init__(self, isize=16, nz=8, nc=3, ngf=8, ndf=8, clamp_lower=-0.01, clamp_upper=0.01):
        super().__init__()
        self.netG = DCGAN_G(isize, nz, nc, ngf)
        self.netD = DCGAN_D(isize, nc, ndf)
        self.netG.apply(weights_init)
        self.netD.apply(weights_init)
        self.clamp_lower = clamp_lower
        self.clamp_upper = clamp_upper
        self.register_buffer("one", torch.FloatTensor([1]))
        self.register_buffer("mone", torch.FloatTensor([1]) * -1)

    def forward(self, real_cpu, noise):
        netD, netG = self.netD, self.netG
        for p in netD.parameters():
            p.requires_grad = True
        for p in netD.parameters():
            p.data.clamp_(self.clamp_lower, self.clamp_upper)
        errD_real = netD(real_cpu)
        with torch.no_grad():
            noisev = noise
        fake = netG(noisev)
        errD_fake = netD(fake.detach())
        errD = errD_real - errD_fake
        for p in netD.parameters():
            p.requires_grad = False
        errG = netD(fake)
        return errD * self.one, errG * self.mone


torch.manual_seed(0)
model = WGANStep()
with torch.no_grad():
    for _m in model.modules():
        if isinstance(_m, nn.BatchNorm2d):
            _m.running_mean.normal_(0, 0.1)
            _m.running_var.uniform_(0.5, 1.5)
model.eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    real = torch.rand(4, 3, 16, 16, generator=g) * 2 - 1
    noise = torch.randn(4, 8, 1, 1, generator=g)
    return real, noise
