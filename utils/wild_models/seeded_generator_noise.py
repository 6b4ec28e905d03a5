"""Reproducible sampling as diffusers pipelines and RL evaluation code
write it: a `torch.Generator(device="cpu").manual_seed(seed)` made in
forward from an int argument, `randn_tensor(shape, generator=...)` drawing
per-sample noise from a list of generators (one per batch element, each
seeded `seed + i`) and `torch.cat`ing it, `torch.randn(...,
generator=g)` and `torch.rand(..., generator=g)` for the ancestral
noise and a Bernoulli dropout-like mask, an Euler-ancestral sampling loop
over a sigma schedule from `torch.linspace(...).exp()`, and a
`generator.initial_seed()` read back into the result."""
import math

import torch
import torch.nn as nn


def randn_tensor(shape, generator=None, device=None, dtype=None):
    if isinstance(generator, list):
        shape = (1,) + tuple(shape[1:])
        latents = [torch.randn(shape, generator=g, device=device, dtype=dtype) for g in generator]
        return torch.cat(latents, dim=0)
    return torch.randn(shape, generator=generator, device=device, dtype=dtype)


class Denoiser(nn.Module):
    def __init__(self, dim=8, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim + 2, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(),
                                 nn.Linear(hidden, dim))

    def forward(self, x, sigma):
        c_in = 1 / torch.sqrt(sigma ** 2 + 1)
        emb = torch.stack([torch.log(sigma) / 4, torch.ones_like(sigma)], -1).expand(x.shape[0], 2)
        return self.net(torch.cat([x * c_in, emb], -1))


class EulerAncestralPipeline(nn.Module):
    def __init__(self, dim=8, steps=6, sigma_min=0.05, sigma_max=8.0):
        super().__init__()
        self.unet = Denoiser(dim)
        self.dim = dim
        sigmas = torch.linspace(math.log(sigma_max), math.log(sigma_min), steps).exp()
        self.register_buffer("sigmas", torch.cat([sigmas, sigmas.new_zeros(1)]))

    def forward(self, cond, seed: int = 0, eta: float = 1.0):
        batch = cond.shape[0]
        generators = [torch.Generator(device="cpu").manual_seed(seed + i) for i in range(batch)]
        x = randn_tensor((batch, self.dim), generator=generators, dtype=cond.dtype) * self.sigmas[0]
        g = torch.Generator(device="cpu").manual_seed(seed + 1000)
        for i in range(len(self.sigmas) - 1):
            sigma, sigma_next = self.sigmas[i], self.sigmas[i + 1]
            denoised = x - sigma * self.unet(x + cond, sigma)
            sigma_up = torch.minimum(sigma_next, eta * (sigma_next ** 2 * (sigma ** 2 - sigma_next ** 2) / sigma ** 2).sqrt())
            sigma_down = (sigma_next ** 2 - sigma_up ** 2).sqrt()
            d = (x - denoised) / sigma
            x = x + d * (sigma_down - sigma)
            x = x + torch.randn(x.shape, generator=g, dtype=x.dtype) * sigma_up
        keep = torch.rand(x.shape, generator=g) > 0.1
        return x * keep, torch.tensor(g.initial_seed())


torch.manual_seed(0)
model = EulerAncestralPipeline().eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.randn(3, 8, generator=g),)


def example_kwargs():
    return {"seed": 42}
