"""A model that registers a gradient hook on an intermediate when it
trains (muzero-general's `hidden_state.register_hook(lambda grad: grad *
0.5)`). Used by test_autograd_inside.py."""
import torch
from torch import nn


class HalvedGradient(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        hidden = torch.tanh(self.lin(x))
        if hidden.requires_grad:
            hidden.register_hook(lambda grad: grad * 0.5)
        return (hidden * 2).sum(-1)


def example_inputs():
    return (torch.randn(4, 3, generator=torch.Generator().manual_seed(0)),)
