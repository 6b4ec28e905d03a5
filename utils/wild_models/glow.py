"""Glow as rosinality's glow-pytorch writes it: ActNorm with a
data-dependent initialization on the first batch, kept in a uint8
`initialized` buffer tested by `if self.initialized.item() == 0:` in
forward (the model here is warmed once at import, as a trained model
is), `logabs = lambda x: torch.log(torch.abs(x))`, the invertible 1x1
convolution in LU form (permutation, masks, sign and identity buffers;
`w_l`, `w_s`, `w_u` parameters; weight rebuilt by `@` and `torch.diag`
in forward, logdet by `torch.sum(self.w_s)`), ZeroConv2d padding with
value 1 and scaling by `exp(scale * 3)`, affine coupling with
`sigmoid(log_s + 2)`, squeeze by view/permute, a learned prior per level
split off with `gaussian_log_p` over `log(2 * pi)`, and the bits-per-dim
loss from `calc_loss` with `log(n_bins) * n_pixel`."""
from math import log, pi

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

logabs = lambda x: torch.log(torch.abs(x))  # noqa: E731


class ActNorm(nn.Module):
    def __init__(self, in_channel, logdet=True):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(1, in_channel, 1, 1))
        self.scale = nn.Parameter(torch.ones(1, in_channel, 1, 1))
        self.register_buffer("initialized", torch.tensor(0, dtype=torch.uint8))
        self.logdet = logdet

    def initialize(self, input):
        with torch.no_grad():
            flatten = input.permute(1, 0, 2, 3).contiguous().view(input.shape[1], -1)
            mean = flatten.mean(1).unsqueeze(1).unsqueeze(2).unsqueeze(3).permute(1, 0, 2, 3)
            std = flatten.std(1).unsqueeze(1).unsqueeze(2).unsqueeze(3).permute(1, 0, 2, 3)
            self.loc.data.copy_(-mean)
            self.scale.data.copy_(1 / (std + 1e-6))

    def forward(self, input):
        _, _, height, width = input.shape
        if self.initialized.item() == 0:
            self.initialize(input)
            self.initialized.fill_(1)
        log_abs = logabs(self.scale)
        logdet = height * width * torch.sum(log_abs)
        if self.logdet:
            return self.scale * (input + self.loc), logdet
        return self.scale * (input + self.loc)


class InvConv2dLU(nn.Module):
    def __init__(self, in_channel):
        super().__init__()
        weight = np.random.randn(in_channel, in_channel)
        q, _ = np.linalg.qr(weight)
        w_p, w_l, w_u = torch.linalg.lu(torch.from_numpy(q.astype(np.float32)))
        w_s = torch.diagonal(w_u)
        w_u = torch.triu(w_u, 1)
        u_mask = torch.triu(torch.ones_like(w_u), 1)
        l_mask = u_mask.T
        self.register_buffer("w_p", w_p)
        self.register_buffer("u_mask", u_mask)
        self.register_buffer("l_mask", l_mask)
        self.register_buffer("s_sign", torch.sign(w_s))
        self.register_buffer("l_eye", torch.eye(l_mask.shape[0]))
        self.w_l = nn.Parameter(w_l)
        self.w_s = nn.Parameter(logabs(w_s))
        self.w_u = nn.Parameter(w_u)

    def forward(self, input):
        _, _, height, width = input.shape
        weight = self.calc_weight()
        out = F.conv2d(input, weight)
        logdet = height * width * torch.sum(self.w_s)
        return out, logdet

    def calc_weight(self):
        weight = (self.w_p @ (self.w_l * self.l_mask + self.l_eye)
                  @ ((self.w_u * self.u_mask) + torch.diag(self.s_sign * torch.exp(self.w_s))))
        return weight.unsqueeze(2).unsqueeze(3)


class ZeroConv2d(nn.Module):
    def __init__(self, in_channel, out_channel):
        super().__init__()
        self.conv = nn.Conv2d(in_channel, out_channel, 3, padding=0)
        self.conv.weight.data.normal_(0, 0.01)
        self.conv.bias.data.zero_()
        self.scale = nn.Parameter(torch.randn(1, out_channel, 1, 1) * 0.01)

    def forward(self, input):
        out = F.pad(input, [1, 1, 1, 1], value=1)
        out = self.conv(out)
        return out * torch.exp(self.scale * 3)


class AffineCoupling(nn.Module):
    def __init__(self, in_channel, filter_size=32, affine=True):
        super().__init__()
        self.affine = affine
        self.net = nn.Sequential(
            nn.Conv2d(in_channel // 2, filter_size, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(filter_size, filter_size, 1), nn.ReLU(inplace=True),
            ZeroConv2d(filter_size, in_channel if self.affine else in_channel // 2),
        )
        self.net[0].weight.data.normal_(0, 0.05)
        self.net[0].bias.data.zero_()
        self.net[2].weight.data.normal_(0, 0.05)
        self.net[2].bias.data.zero_()

    def forward(self, input):
        in_a, in_b = input.chunk(2, 1)
        if self.affine:
            log_s, t = self.net(in_a).chunk(2, 1)
            s = F.sigmoid(log_s + 2)
            out_b = (in_b + t) * s
            logdet = torch.sum(torch.log(s).view(input.shape[0], -1), 1)
        else:
            net_out = self.net(in_a)
            out_b = in_b + net_out
            logdet = None
        return torch.cat([in_a, out_b], 1), logdet


class Flow(nn.Module):
    def __init__(self, in_channel, affine=True):
        super().__init__()
        self.actnorm = ActNorm(in_channel)
        self.invconv = InvConv2dLU(in_channel)
        self.coupling = AffineCoupling(in_channel, affine=affine)

    def forward(self, input):
        out, logdet = self.actnorm(input)
        out, det1 = self.invconv(out)
        out, det2 = self.coupling(out)
        logdet = logdet + det1
        if det2 is not None:
            logdet = logdet + det2
        return out, logdet


def gaussian_log_p(x, mean, log_sd):
    return -0.5 * log(2 * pi) - log_sd - 0.5 * (x - mean) ** 2 / torch.exp(2 * log_sd)


class Block(nn.Module):
    def __init__(self, in_channel, n_flow, split=True, affine=True):
        super().__init__()
        squeeze_dim = in_channel * 4
        self.flows = nn.ModuleList([Flow(squeeze_dim, affine=affine) for _ in range(n_flow)])
        self.split = split
        if split:
            self.prior = ZeroConv2d(in_channel * 2, in_channel * 4)
        else:
            self.prior = ZeroConv2d(in_channel * 4, in_channel * 8)

    def forward(self, input):
        b_size, n_channel, height, width = input.shape
        squeezed = input.view(b_size, n_channel, height // 2, 2, width // 2, 2)
        squeezed = squeezed.permute(0, 1, 3, 5, 2, 4)
        out = squeezed.contiguous().view(b_size, n_channel * 4, height // 2, width // 2)
        logdet = 0
        for flow in self.flows:
            out, det = flow(out)
            logdet = logdet + det
        if self.split:
            out, z_new = out.chunk(2, 1)
            mean, log_sd = self.prior(out).chunk(2, 1)
            log_p = gaussian_log_p(z_new, mean, log_sd)
            log_p = log_p.view(b_size, -1).sum(1)
        else:
            zero = torch.zeros_like(out)
            mean, log_sd = self.prior(zero).chunk(2, 1)
            log_p = gaussian_log_p(out, mean, log_sd)
            log_p = log_p.view(b_size, -1).sum(1)
            z_new = out
        return out, logdet, log_p, z_new


class Glow(nn.Module):
    def __init__(self, in_channel=3, n_flow=2, n_block=2, affine=True, n_bins=32.0, image_size=8):
        super().__init__()
        self.blocks = nn.ModuleList()
        n_channel = in_channel
        for i in range(n_block - 1):
            self.blocks.append(Block(n_channel, n_flow, affine=affine))
            n_channel *= 2
        self.blocks.append(Block(n_channel, n_flow, split=False, affine=affine))
        self.n_bins = n_bins
        self.n_pixel = image_size * image_size * in_channel

    def calc_loss(self, log_p, logdet):
        loss = -log(self.n_bins) * self.n_pixel
        loss = loss + logdet + log_p
        return ((-loss / (log(2) * self.n_pixel)).mean(), (log_p / (log(2) * self.n_pixel)).mean(),
                (logdet / (log(2) * self.n_pixel)).mean())

    def forward(self, input):
        log_p_sum = 0
        logdet = 0
        out = input
        z_outs = []
        for block in self.blocks:
            out, det, log_p, z_new = block(out)
            z_outs.append(z_new)
            logdet = logdet + det
            if log_p is not None:
                log_p_sum = log_p_sum + log_p
        loss, log_p_bpd, logdet_bpd = self.calc_loss(log_p_sum, logdet)
        return loss, log_p_bpd, logdet_bpd, z_outs


torch.manual_seed(0)
np.random.seed(0)
model = Glow()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    image = torch.floor(torch.rand(4, 3, 8, 8, generator=g) * 32) / 32 - 0.5
    return (image + torch.rand(4, 3, 8, 8, generator=g) / 32,)


with torch.no_grad():
    model(*example_inputs())
model.eval()
