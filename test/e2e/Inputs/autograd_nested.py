"""Custom autograd.Functions whose arguments or results hold tensors in
tuples and lists. As eager's apply treats them: only tensor arguments are
inputs (a tensor requiring grad in a list is read by forward, with grad
mode off, and gets no gradient through the Function), and only tensors at
the top of forward's result get history (those nested in a tuple or list
are returned as forward made them, and backward gets None for them)."""
import torch
from torch import nn


class Split(torch.autograd.Function):
    """Two outputs as a tuple, each with its own gradient."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0), x.clamp(max=0)

    @staticmethod
    def backward(ctx, pos, neg):
        (x,) = ctx.saved_tensors
        return pos * 3 + neg * (x < 0).to(neg.dtype)


class Gated(torch.autograd.Function):
    """A gate and a bias passed as a list; the gradient goes to x only."""

    @staticmethod
    def forward(ctx, x, extras):
        gate, bias = extras
        ctx.save_for_backward(gate)
        return x * gate + bias

    @staticmethod
    def backward(ctx, grad):
        (gate,) = ctx.saved_tensors
        return grad * gate * 2, None


class Report(torch.autograd.Function):
    """A result with tensors nested in a tuple and a list, and an input
    passed back nested."""

    @staticmethod
    def forward(ctx, x, pair):
        return x * 2, (x * 3, pair[0]), [x.sum()]

    @staticmethod
    def backward(ctx, grad, nested, listed):
        assert nested is None and listed is None
        return grad * 5, None


class SplitNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.linspace(-1, 1, 6).reshape(2, 3))

    def forward(self, x):
        pos, neg = Split.apply(x * self.weight)
        return pos + 2 * neg


class GatedNet(SplitNet):
    def forward(self, x):
        h = x * self.weight
        gate = torch.sigmoid(self.weight)
        return Gated.apply(h, [gate, self.weight * 0.5]) + gate


class ReportNet(SplitNet):
    def forward(self, x):
        h = x * self.weight
        out, (tripled, given), (total,) = Report.apply(h, (self.weight, x))
        return out, tripled, given, total


def example_inputs():
    return (torch.randn(2, 3),)
