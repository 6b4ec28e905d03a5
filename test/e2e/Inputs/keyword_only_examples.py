"""An entry taking `*args` and a keyword-only flag (DINOv2's
`forward(*args, is_training=False, **kwargs)`), exported with the flag
given by example_kwargs() and the tensors by example_inputs()."""
import torch
from torch import nn


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.proj = nn.Linear(4, 4)

    def features(self, x, masks=None):
        h = self.proj(x)
        if masks is not None:
            h = torch.where(masks.unsqueeze(-1), torch.zeros_like(h), h)
        return {"tokens": h, "pooled": h.mean(1)}

    def forward(self, *args, is_training=False, **kwargs):
        out = self.features(*args, **kwargs)
        return out if is_training else out["pooled"]


model = Backbone()


def example_inputs():
    return (torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(1)),)


def example_kwargs():
    return {"masks": torch.tensor([[True, False, False], [False, False, True]]), "is_training": True}
