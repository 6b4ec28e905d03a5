"""PEP 584's dict merge in forward: options built as `defaults | {...}`,
overridden by the call's keywords with `|=`, and a list of pairs merged in
place; a kernel's keyword arguments gathered so, as Mamba-2 mixers do."""
import torch
from torch import nn


def mix(x, weight, scale=1.0, shift=0.0, gate=None):
    y = x @ weight * scale + shift
    return y * torch.sigmoid(gate) if gate is not None else y


class Merged(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.weight = nn.Parameter(torch.randn(4, 4))
        self.gate = nn.Parameter(torch.randn(4))
        self.defaults = {"scale": 2.0, "shift": 0.5}

    def forward(self, x, **kwargs):
        options = self.defaults | {"shift": -1.0}
        options |= kwargs
        options |= [("gate", self.gate)]
        # The held dict is not changed by `|`.
        return mix(x, self.weight, **options), self.defaults["shift"], sorted(options)


def example_inputs():
    torch.manual_seed(1)
    return (torch.randn(3, 4),)


def example_kwargs():
    return {"scale": 3.0}
