"""MeanFlow / consistency-model training as the recent one-step generative
repos write it: a time-conditioned velocity network `u(z, r, t)` with
sinusoidal embeddings of both times, the interpolant
`z = (1 - t) x + t e`, the total derivative `du/dt` along the flow by
forward-mode `torch.func.jvp(fn, (z, r, t), (v, zeros_like(r), ones_like(t)))`
over a closure calling the module's net, the regression target
`u_tgt = v - (t - r) du/dt` `.detach()`ed, an adaptive loss weight
`(err + c) ** -p` also detached, and one-step sampling `x = e - u(e, 0, 1)`
returned beside the loss."""
import math

import torch
import torch.nn as nn


def timestep_embedding(t, dim, max_period=10000.0):
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(half, dtype=torch.float32, device=t.device) / half)
    args = t[:, None].float() * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class VelocityNet(nn.Module):
    def __init__(self, dim=6, hidden=32, temb=16):
        super().__init__()
        self.temb = temb
        self.t_mlp = nn.Sequential(nn.Linear(2 * temb, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.inp = nn.Linear(dim, hidden)
        self.blocks = nn.ModuleList(nn.Sequential(nn.LayerNorm(hidden), nn.Linear(hidden, hidden), nn.SiLU(),
                                                  nn.Linear(hidden, hidden)) for _ in range(2))
        self.out = nn.Linear(hidden, dim)

    def forward(self, z, r, t):
        c = self.t_mlp(torch.cat([timestep_embedding(t * 1000, self.temb),
                                  timestep_embedding((t - r) * 1000, self.temb)], dim=-1))
        h = self.inp(z) + c
        for block in self.blocks:
            h = h + block(h)
        return self.out(h)


class MeanFlow(nn.Module):
    def __init__(self, gamma=0.5, c=1e-3):
        super().__init__()
        self.net = VelocityNet()
        self.gamma = gamma
        self.c = c

    def forward(self, x, e, t, r):
        t, r = torch.maximum(t, r), torch.minimum(t, r)
        t_ = t.view(-1, 1)
        r_ = r.view(-1, 1)
        z = (1 - t_) * x + t_ * e
        v = e - x

        def fn(z, r, t):
            return self.net(z, r, t)

        u, dudt = torch.func.jvp(fn, (z, r, t), (v, torch.zeros_like(r), torch.ones_like(t)))
        u_tgt = (v - (t_ - r_) * dudt).detach()
        err = (u - u_tgt).pow(2).sum(dim=1)
        weight = (err.detach() + self.c).pow(-(1 - self.gamma))
        loss = (weight * err).mean()
        ones, zeros = torch.ones_like(t), torch.zeros_like(t)
        sample = e - self.net(e, zeros, ones)
        return sample, loss


torch.manual_seed(0)
model = MeanFlow().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.randn(5, 6, generator=g), torch.randn(5, 6, generator=g), torch.rand(5, generator=g),
            torch.rand(5, generator=g))
