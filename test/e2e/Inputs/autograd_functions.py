"""Custom autograd.Functions in models whose parameters require grad: one
applied to a parameter (its backward scales the gradient, so a graph that
skipped it would give other gradients), and one whose forward reads a
parameter it is not given (apply runs forward with grad mode off, so eager's
result does not require grad)."""
import torch
from torch import nn


class ScaledGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad * 10


class ScaleBy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, module):
        return x * module.weight

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class Applied(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(3))

    def forward(self, x):
        return torch.tanh(x * ScaledGrad.apply(self.weight))


class Reads(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(3))

    def forward(self, x):
        return ScaleBy.apply(x, self) + 1


def example_inputs():
    return (torch.randn(2, 3),)
