"""A DDIM-style step that indexes a schedule buffer with a 0-d timestep
tensor (`alphas_cumprod[t]`, `alphas_cumprod[prev.clamp(min=0)]`) and a
table with an `item()` int among slices and None."""
import torch
from torch import nn


class Step(nn.Module):
    def __init__(self):
        super().__init__()
        betas = torch.linspace(1e-4, 0.02, 50)
        self.register_buffer("alphas_cumprod", torch.cumprod(1.0 - betas, 0))
        self.register_buffer("table", torch.arange(40.0).reshape(5, 8))

    def forward(self, x, t, noise):
        prev = t - 10
        a = self.alphas_cumprod[t]
        a_prev = torch.where(prev >= 0, self.alphas_cumprod[prev.clamp(min=0)], torch.ones_like(a))
        x0 = (x - (1 - a) ** 0.5 * noise) / a ** 0.5
        row = self.table[None, (t % 5).item(), 2:]
        return a_prev ** 0.5 * x0 + (1 - a_prev) ** 0.5 * noise + row


model = Step()


def example_inputs():
    g = torch.Generator().manual_seed(0)
    return torch.randn(2, 6, generator=g), torch.tensor(31), torch.randn(2, 6, generator=g)
