"""CycleGAN / pix2pix as junyanz/pytorch-CycleGAN-and-pix2pix writes it:
`get_norm_layer('instance')` returning `functools.partial(nn.InstanceNorm2d,
affine=False, track_running_stats=False)`, `use_bias` decided by
`type(norm_layer) == functools.partial` and `norm_layer.func ==
nn.InstanceNorm2d`, a `ResnetGenerator` whose `ResnetBlock.build_conv_block`
picks ReflectionPad2d / ReplicationPad2d / zero padding by a
`padding_type` string, downsampling by `mult = 2 ** i` loops, transposed
conv upsampling with `output_padding=1`, an `NLayerDiscriminator`
(PatchGAN) built by `nf_mult = min(2 ** n, 8)`, a `GANLoss` with
`register_buffer('real_label', torch.tensor(1.0))` and
`get_target_tensor(...).expand_as(prediction)` choosing MSE ('lsgan') or
BCE-with-logits by `gan_mode`, and the generator objective of
`backward_G`: identity loss scaled by `lambda_idt`, adversarial losses of
both generators and L1 cycle-consistency losses, summed, with the losses
also returned by name like `get_current_losses` (float of each)."""
import functools
from collections import OrderedDict

import torch
import torch.nn as nn


def get_norm_layer(norm_type="instance"):
    if norm_type == "batch":
        norm_layer = functools.partial(nn.BatchNorm2d, affine=True, track_running_stats=True)
    elif norm_type == "instance":
        norm_layer = functools.partial(nn.InstanceNorm2d, affine=False, track_running_stats=False)
    elif norm_type == "none":
        def norm_layer(x):
            return nn.Identity()
    else:
        raise NotImplementedError("normalization layer [%s] is not found" % norm_type)
    return norm_layer


class ResnetBlock(nn.Module):
    def __init__(self, dim, padding_type, norm_layer, use_dropout, use_bias):
        super(ResnetBlock, self).__init__()
        self.conv_block = self.build_conv_block(dim, padding_type, norm_layer, use_dropout, use_bias)

    def build_conv_block(self, dim, padding_type, norm_layer, use_dropout, use_bias):
        conv_block = []
        p = 0
        if padding_type == "reflect":
            conv_block += [nn.ReflectionPad2d(1)]
        elif padding_type == "replicate":
            conv_block += [nn.ReplicationPad2d(1)]
        elif padding_type == "zero":
            p = 1
        else:
            raise NotImplementedError("padding [%s] is not implemented" % padding_type)
        conv_block += [nn.Conv2d(dim, dim, kernel_size=3, padding=p, bias=use_bias), norm_layer(dim), nn.ReLU(True)]
        if use_dropout:
            conv_block += [nn.Dropout(0.5)]
        p = 0
        if padding_type == "reflect":
            conv_block += [nn.ReflectionPad2d(1)]
        elif padding_type == "replicate":
            conv_block += [nn.ReplicationPad2d(1)]
        elif padding_type == "zero":
            p = 1
        conv_block += [nn.Conv2d(dim, dim, kernel_size=3, padding=p, bias=use_bias), norm_layer(dim)]
        return nn.Sequential(*conv_block)

    def forward(self, x):
        out = x + self.conv_block(x)
        return out


class ResnetGenerator(nn.Module):
    def __init__(self, input_nc, output_nc, ngf=64, norm_layer=nn.BatchNorm2d, use_dropout=False, n_blocks=6,
                 padding_type="reflect"):
        assert (n_blocks >= 0)
        super(ResnetGenerator, self).__init__()
        if type(norm_layer) == functools.partial:
            use_bias = norm_layer.func == nn.InstanceNorm2d
        else:
            use_bias = norm_layer == nn.InstanceNorm2d
        model = [nn.ReflectionPad2d(3), nn.Conv2d(input_nc, ngf, kernel_size=7, padding=0, bias=use_bias),
                 norm_layer(ngf), nn.ReLU(True)]
        n_downsampling = 2
        for i in range(n_downsampling):
            mult = 2 ** i
            model += [nn.Conv2d(ngf * mult, ngf * mult * 2, kernel_size=3, stride=2, padding=1, bias=use_bias),
                      norm_layer(ngf * mult * 2), nn.ReLU(True)]
        mult = 2 ** n_downsampling
        for i in range(n_blocks):
            model += [ResnetBlock(ngf * mult, padding_type=padding_type, norm_layer=norm_layer,
                                  use_dropout=use_dropout, use_bias=use_bias)]
        for i in range(n_downsampling):
            mult = 2 ** (n_downsampling - i)
            model += [nn.ConvTranspose2d(ngf * mult, int(ngf * mult / 2), kernel_size=3, stride=2, padding=1,
                                         output_padding=1, bias=use_bias),
                      norm_layer(int(ngf * mult / 2)), nn.ReLU(True)]
        model += [nn.ReflectionPad2d(3)]
        model += [nn.Conv2d(ngf, output_nc, kernel_size=7, padding=0)]
        model += [nn.Tanh()]
        self.model = nn.Sequential(*model)

    def forward(self, input):
        return self.model(input)


class NLayerDiscriminator(nn.Module):
    def __init__(self, input_nc, ndf=64, n_layers=3, norm_layer=nn.BatchNorm2d):
        super(NLayerDiscriminator, self).__init__()
        if type(norm_layer) == functools.partial:
            use_bias = norm_layer.func == nn.InstanceNorm2d
        else:
            use_bias = norm_layer == nn.InstanceNorm2d
        kw = 4
        padw = 1
        sequence = [nn.Conv2d(input_nc, ndf, kernel_size=kw, stride=2, padding=padw), nn.LeakyReLU(0.2, True)]
        nf_mult = 1
        nf_mult_prev = 1
        for n in range(1, n_layers):
            nf_mult_prev = nf_mult
            nf_mult = min(2 ** n, 8)
            sequence += [
                nn.Conv2d(ndf * nf_mult_prev, ndf * nf_mult, kernel_size=kw, stride=2, padding=padw, bias=use_bias),
                norm_layer(ndf * nf_mult), nn.LeakyReLU(0.2, True)]
        nf_mult_prev = nf_mult
        nf_mult = min(2 ** n_layers, 8)
        sequence += [
            nn.Conv2d(ndf * nf_mult_prev, ndf * nf_mult, kernel_size=kw, stride=1, padding=padw, bias=use_bias),
            norm_layer(ndf * nf_mult), nn.LeakyReLU(0.2, True)]
        sequence += [nn.Conv2d(ndf * nf_mult, 1, kernel_size=kw, stride=1, padding=padw)]
        self.model = nn.Sequential(*sequence)

    def forward(self, input):
        return self.model(input)


class GANLoss(nn.Module):
    def __init__(self, gan_mode, target_real_label=1.0, target_fake_label=0.0):
        super(GANLoss, self).__init__()
        self.register_buffer("real_label", torch.tensor(target_real_label))
        self.register_buffer("fake_label", torch.tensor(target_fake_label))
        self.gan_mode = gan_mode
        if gan_mode == "lsgan":
            self.loss = nn.MSELoss()
        elif gan_mode == "vanilla":
            self.loss = nn.BCEWithLogitsLoss()
        elif gan_mode in ["wgangp"]:
            self.loss = None
        else:
            raise NotImplementedError("gan mode %s not implemented" % gan_mode)

    def get_target_tensor(self, prediction, target_is_real):
        if target_is_real:
            target_tensor = self.real_label
        else:
            target_tensor = self.fake_label
        return target_tensor.expand_as(prediction)

    def __call__(self, prediction, target_is_real):
        if self.gan_mode in ["lsgan", "vanilla"]:
            target_tensor = self.get_target_tensor(prediction, target_is_real)
            loss = self.loss(prediction, target_tensor)
        elif self.gan_mode == "wgangp":
            loss = -prediction.mean() if target_is_real else prediction.mean()
        return loss


class CycleGANModel(nn.Module):
    def __init__(self, opt):
        super().__init__()
        self.opt = opt
        self.loss_names = ["D_A", "G_A", "cycle_A", "idt_A", "D_B", "G_B", "cycle_B", "idt_B"]
        norm_layer = get_norm_layer(norm_type=opt["norm"])
        self.netG_A = ResnetGenerator(opt["input_nc"], opt["output_nc"], opt["ngf"], norm_layer=norm_layer,
                                      use_dropout=not opt["no_dropout"], n_blocks=2)
        self.netG_B = ResnetGenerator(opt["output_nc"], opt["input_nc"], opt["ngf"], norm_layer=norm_layer,
                                      use_dropout=not opt["no_dropout"], n_blocks=2)
        self.netD_A = NLayerDiscriminator(opt["output_nc"], opt["ndf"], n_layers=2, norm_layer=norm_layer)
        self.netD_B = NLayerDiscriminator(opt["input_nc"], opt["ndf"], n_layers=2, norm_layer=norm_layer)
        self.criterionGAN = GANLoss(opt["gan_mode"])
        self.criterionCycle = torch.nn.L1Loss()
        self.criterionIdt = torch.nn.L1Loss()

    def set_input(self, input):
        AtoB = self.opt["direction"] == "AtoB"
        self.real_A = input["A" if AtoB else "B"]
        self.real_B = input["B" if AtoB else "A"]

    def forward(self, input):
        self.set_input(input)
        self.fake_B = self.netG_A(self.real_A)
        self.rec_A = self.netG_B(self.fake_B)
        self.fake_A = self.netG_B(self.real_B)
        self.rec_B = self.netG_A(self.fake_A)
        lambda_idt = self.opt["lambda_identity"]
        lambda_A = self.opt["lambda_A"]
        lambda_B = self.opt["lambda_B"]
        if lambda_idt > 0:
            self.idt_A = self.netG_A(self.real_B)
            self.loss_idt_A = self.criterionIdt(self.idt_A, self.real_B) * lambda_B * lambda_idt
            self.idt_B = self.netG_B(self.real_A)
            self.loss_idt_B = self.criterionIdt(self.idt_B, self.real_A) * lambda_A * lambda_idt
        else:
            self.loss_idt_A = 0
            self.loss_idt_B = 0
        self.loss_G_A = self.criterionGAN(self.netD_A(self.fake_B), True)
        self.loss_G_B = self.criterionGAN(self.netD_B(self.fake_A), True)
        self.loss_cycle_A = self.criterionCycle(self.rec_A, self.real_A) * lambda_A
        self.loss_cycle_B = self.criterionCycle(self.rec_B, self.real_B) * lambda_B
        self.loss_G = self.loss_G_A + self.loss_G_B + self.loss_cycle_A + self.loss_cycle_B + self.loss_idt_A \
            + self.loss_idt_B
        errors_ret = OrderedDict()
        for name in ["G_A", "cycle_A", "idt_A", "G_B", "cycle_B", "idt_B"]:
            if isinstance(name, str):
                errors_ret[name] = float(getattr(self, "loss_" + name))
        return self.loss_G, self.fake_B, errors_ret


opt = dict(input_nc=3, output_nc=3, ngf=8, ndf=8, norm="instance", no_dropout=True, gan_mode="lsgan",
           direction="AtoB", lambda_identity=0.5, lambda_A=10.0, lambda_B=10.0)
torch.manual_seed(0)
model = CycleGANModel(opt).eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return ({"A": torch.rand(1, 3, 32, 32, generator=g) * 2 - 1, "B": torch.rand(1, 3, 32, 32, generator=g) * 2 - 1},)
