"""A library's module whose forward is the entry a user's file exports:
it builds a normal distribution with its arguments validated, which asks
torch for a data-dependent branch inside torch's own code."""
import torch
from torch import nn


class Sampler(nn.Module):
    def forward(self, loc, scale):
        normal = torch.distributions.Normal(loc, scale, validate_args=True)
        return normal.mean * 2
