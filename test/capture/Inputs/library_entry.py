"""A library's module whose forward is the entry a user's file exports:
it asks torch whether a mask is causal, which torch decides from the
mask's values, a data-dependent branch inside torch's own code."""
import torch
from torch import nn


class Sampler(nn.Module):
    def forward(self, loc, mask):
        causal = nn.modules.transformer._detect_is_causal_mask(mask)
        return loc * 2 if causal else loc
