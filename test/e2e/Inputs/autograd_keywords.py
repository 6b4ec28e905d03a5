"""Custom autograd.Functions applied with keyword arguments, which apply
binds to forward's parameters: a tensor passed by keyword is an input in
forward's order (its gradient is backward's result at that position), a
function with setup_context has forward's defaults bound too, and a keyword
forward does not take raises apply's TypeError, which the program
catches."""
import torch
from torch import nn


class Mix(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y, scale=1.0):
        ctx.save_for_backward(x, y)
        ctx.scale = scale
        return x * y * scale

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        return grad * y * 10, grad * x * 100 * ctx.scale, None


class Scaled(torch.autograd.Function):
    @staticmethod
    def forward(x, y, power=2):
        return x * y**power

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, y, power = inputs
        ctx.save_for_backward(x, y)
        ctx.power = power

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        return grad * 3, grad * x * ctx.power * 7, None


class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.linspace(-1, 1, 6).reshape(2, 3))
        self.other = nn.Parameter(torch.linspace(0.5, 2, 6).reshape(2, 3))


class ByKeyword(Base):
    def forward(self, x):
        return Mix.apply(x * self.weight, y=self.other, scale=0.5)


class Reversed(Base):
    def forward(self, x):
        return Mix.apply(y=self.other, x=x * self.weight)


class SetupDefaults(Base):
    def forward(self, x):
        return Scaled.apply(x * self.weight, y=self.other)


class Misnamed(Base):
    def forward(self, x):
        try:
            return Mix.apply(x * self.weight, z=self.other)
        except TypeError:
            return x * self.weight * self.other


def example_inputs():
    return (torch.randn(2, 3),)
