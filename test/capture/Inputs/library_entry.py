"""A library's module whose forward is the entry a user's file exports:
it asks torch's adaptive softmax for its predictions, which torch decides
from the values (whether every prediction is in the shortlist), a
data-dependent branch inside torch's own code."""
import torch
from torch import nn


class Sampler(nn.Module):
    def __init__(self):
        super().__init__()
        self.adaptive = nn.AdaptiveLogSoftmaxWithLoss(4, 8, cutoffs=[4], div_value=2.0)

    def forward(self, loc, mask):
        return self.adaptive.predict(loc.view(1, 4) + mask[:1])
