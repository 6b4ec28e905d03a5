"""A RealNVP normalizing flow as tutorials and flow libraries write it:
affine coupling layers with alternating checkerboard masks kept as buffers,
scale and translation nets with tanh-bounded scales, the log-determinant
summed per sample, and the standard normal's log-probability of the latent."""
import math

import torch
import torch.nn as nn


class Coupling(nn.Module):
    def __init__(self, dim, mask, hidden=32):
        super().__init__()
        self.register_buffer("mask", mask)
        self.scale_net = nn.Sequential(nn.Linear(dim, hidden), nn.LeakyReLU(), nn.Linear(hidden, dim), nn.Tanh())
        self.translate_net = nn.Sequential(nn.Linear(dim, hidden), nn.LeakyReLU(), nn.Linear(hidden, dim))
        self.scale_factor = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        x_masked = x * self.mask
        s = self.scale_net(x_masked) * self.scale_factor.exp() * (1 - self.mask)
        t = self.translate_net(x_masked) * (1 - self.mask)
        z = x_masked + (1 - self.mask) * (x * torch.exp(s) + t)
        return z, s.sum(dim=1)


class RealNVP(nn.Module):
    def __init__(self, dim=6, layers=4):
        super().__init__()
        masks = [torch.tensor([(i + j) % 2 for j in range(dim)], dtype=torch.float32) for i in range(layers)]
        self.couplings = nn.ModuleList([Coupling(dim, m) for m in masks])
        self.dim = dim

    def forward(self, x):
        log_det = torch.zeros(x.shape[0], device=x.device)
        for coupling in self.couplings:
            x, ld = coupling(x)
            log_det = log_det + ld
        log_pz = -0.5 * (x ** 2).sum(dim=1) - 0.5 * self.dim * math.log(2 * math.pi)
        return x, log_pz + log_det


torch.manual_seed(0)
model = RealNVP().eval()
with torch.no_grad():
    for c in model.couplings:
        c.scale_factor.normal_(0, 0.1)
check_gradients = True


def example_inputs():
    return (torch.randn(8, 6, generator=torch.Generator().manual_seed(1)),)
