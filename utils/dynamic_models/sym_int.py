"""A Python int argument declared dynamic (`--dynamic n=n[1,32]`): it sizes a
slice, a reshape and a new tensor, beside a dynamic batch."""
import torch
from torch import nn


class Windows(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x, n):
        # The first n of 32 positions, weighted by their index, projected.
        head = x[:, :n]
        weights = torch.arange(n, dtype=x.dtype).unsqueeze(1)
        return self.proj(head * weights).reshape(x.shape[0], n * 2, 4)


torch.manual_seed(0)
windows = Windows().eval()


def example_inputs():
    return (torch.randn(4, 32, 8), 5)
