"""Custom autograd.Functions that modify their input in place and mark it
dirty (in-place activations): apply returns the input itself, its version
bumped and its grad_fn the Function's node, and gradients flow through the
user's backward to what computed the input."""
import torch
from torch import nn


class InplaceLeaky(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, slope):
        ctx.mark_dirty(x)
        mask = x > 0
        ctx.save_for_backward(mask)
        ctx.slope = slope
        return x.mul_(torch.where(mask, 1.0, slope))

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        return grad * torch.where(mask, 1.0, ctx.slope) * 3, None


class Dirty(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 5)

    def forward(self, x):
        h = self.fc(x)
        before = h._version
        y = InplaceLeaky.apply(h, 0.1)
        return y, h, y is h, h._version > before


def example_inputs():
    return (torch.randn(3, 4),)
