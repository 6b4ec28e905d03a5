"""GAN discriminator regularizers as rosinality's stylegan2-pytorch and
the WGAN-GP reference code write them: the StyleGAN discriminator with a
minibatch standard-deviation layer (`group = min(batch, self.stddev_group)`,
a six-dimensional view, `var(0, unbiased=False)`, `repeat(group, 1, h, w)`),
`d_logistic_loss` by softplus, the lazy R1 penalty `d_r1_loss` on
`real_img.requires_grad = True` through
`autograd.grad(outputs=real_pred.sum(), inputs=real_img, create_graph=True)`
and `grad_real.pow(2).reshape(n, -1).sum(1).mean()`, scaled by
`r1 / 2 * grad_penalty * d_reg_every`, and WGAN-GP's interpolates between
real and fake with `grad_outputs=torch.ones(...)`, `retain_graph=True`,
`only_inputs=True` and `((gradients.norm(2, dim=1) - 1) ** 2).mean() * LAMBDA`,
all differentiable into the discriminator's weights; an evaluation step
(grad mode off) returns the logistic loss and the mean predictions only."""
import math

import torch
import torch.nn.functional as F
from torch import autograd, nn


class EqualConv2d(nn.Module):
    def __init__(self, cin, cout, kernel, stride=1, padding=0):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(cout, cin, kernel, kernel))
        self.scale = 1 / math.sqrt(cin * kernel ** 2)
        self.stride = stride
        self.padding = padding
        self.bias = nn.Parameter(torch.zeros(cout))

    def forward(self, x):
        return F.conv2d(x, self.weight * self.scale, bias=self.bias, stride=self.stride, padding=self.padding)


class EqualLinear(nn.Module):
    def __init__(self, cin, cout, lr_mul=1.0):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(cout, cin).div_(lr_mul))
        self.bias = nn.Parameter(torch.zeros(cout))
        self.scale = (1 / math.sqrt(cin)) * lr_mul
        self.lr_mul = lr_mul

    def forward(self, x):
        return F.linear(x, self.weight * self.scale, bias=self.bias * self.lr_mul)


class ResBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv1 = EqualConv2d(cin, cin, 3, padding=1)
        self.conv2 = EqualConv2d(cin, cout, 3, stride=2, padding=1)
        self.skip = EqualConv2d(cin, cout, 1, stride=2)

    def forward(self, x):
        out = F.leaky_relu(self.conv1(x), 0.2) * math.sqrt(2)
        out = F.leaky_relu(self.conv2(out), 0.2) * math.sqrt(2)
        return (out + self.skip(x)) / math.sqrt(2)


class Discriminator(nn.Module):
    def __init__(self, size=16, channels=16):
        super().__init__()
        self.convs = nn.Sequential(EqualConv2d(3, channels, 1), ResBlock(channels, channels),
                                   ResBlock(channels, channels))
        self.stddev_group = 4
        self.stddev_feat = 1
        self.final_conv = EqualConv2d(channels + 1, channels, 3, padding=1)
        final = size // 4
        self.final_linear = nn.Sequential(EqualLinear(channels * final * final, channels), nn.LeakyReLU(0.2),
                                          EqualLinear(channels, 1))

    def forward(self, input):
        out = self.convs(input)
        batch, channel, height, width = out.shape
        group = min(batch, self.stddev_group)
        stddev = out.view(group, -1, self.stddev_feat, channel // self.stddev_feat, height, width)
        stddev = torch.sqrt(stddev.var(0, unbiased=False) + 1e-8)
        stddev = stddev.mean([2, 3, 4], keepdims=True).squeeze(2)
        stddev = stddev.repeat(group, 1, height, width)
        out = torch.cat([out, stddev], 1)
        out = F.leaky_relu(self.final_conv(out), 0.2)
        out = out.view(batch, -1)
        return self.final_linear(out)


def d_logistic_loss(real_pred, fake_pred):
    real_loss = F.softplus(-real_pred)
    fake_loss = F.softplus(fake_pred)
    return real_loss.mean() + fake_loss.mean()


def d_r1_loss(real_pred, real_img):
    (grad_real,) = autograd.grad(outputs=real_pred.sum(), inputs=real_img, create_graph=True)
    return grad_real.pow(2).reshape(grad_real.shape[0], -1).sum(1).mean()


class DiscriminatorStep(nn.Module):
    def __init__(self, r1=10.0, d_reg_every=16, lambda_gp=10.0):
        super().__init__()
        self.discriminator = Discriminator()
        self.r1 = r1
        self.d_reg_every = d_reg_every
        self.lambda_gp = lambda_gp

    def calc_gradient_penalty(self, real_data, fake_data, alpha):
        batch = real_data.size(0)
        alpha = alpha.view(batch, 1, 1, 1).expand(real_data.size()).contiguous()
        interpolates = alpha * real_data + ((1 - alpha) * fake_data)
        interpolates = interpolates.detach().requires_grad_(True)
        disc_interpolates = self.discriminator(interpolates)
        gradients = autograd.grad(outputs=disc_interpolates, inputs=interpolates,
                                  grad_outputs=torch.ones(disc_interpolates.size(), device=real_data.device),
                                  create_graph=True, retain_graph=True, only_inputs=True)[0]
        gradients = gradients.view(batch, -1)
        return ((gradients.norm(2, dim=1) - 1) ** 2).mean() * self.lambda_gp

    def forward(self, real_img, fake_img, alpha):
        fake_pred = self.discriminator(fake_img.detach())
        real_pred = self.discriminator(real_img)
        d_loss = d_logistic_loss(real_pred, fake_pred)
        if not torch.is_grad_enabled():  # an evaluation step: no regularizer to differentiate
            return d_loss, None, None, real_pred.mean(), fake_pred.mean()
        real_img = real_img.detach().clone()
        real_img.requires_grad = True
        real_pred_reg = self.discriminator(real_img)
        r1_loss = d_r1_loss(real_pred_reg, real_img)
        gp = self.calc_gradient_penalty(real_img.detach(), fake_img.detach(), alpha)
        r1_term = self.r1 / 2 * r1_loss * self.d_reg_every
        return d_loss, r1_term, gp, real_pred.mean(), fake_pred.mean()


torch.manual_seed(0)
model = DiscriminatorStep().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.randn(4, 3, 16, 16, generator=g), torch.randn(4, 3, 16, 16, generator=g),
            torch.rand(4, generator=g))
