"""Custom autograd.Functions applied to tensors that require grad, whose
backward differs from the true derivative of forward, so the gradients show
that the user's backward ran: a straight-through estimator, a clamp that
passes a scaled gradient, a setup_context function keeping a number on ctx,
an output marked non-differentiable (its absent gradient materialized as
zeros), a backward that branches on ctx.needs_input_grad, and a
once_differentiable backward of a forward that also returns a number."""
import torch
from torch import nn
from torch.autograd.function import once_differentiable


class StraightThrough(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, grad):
        return grad


class ClampPass(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lo, hi):
        ctx.save_for_backward(x)
        ctx.lo = lo
        return x.clamp(lo, hi)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (x > ctx.lo).to(grad.dtype) * 0.5, None, None


class ScaledSquare(torch.autograd.Function):
    @staticmethod
    def forward(x, power):
        return x**power

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, power = inputs
        ctx.save_for_backward(x)
        ctx.power = power

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * ctx.power * x * grad, None


class WithIndex(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        values = x * 2
        mask = (x > 0).to(x.dtype)
        ctx.mark_non_differentiable(mask)
        ctx.save_for_backward(mask)
        return values, mask

    @staticmethod
    def backward(ctx, grad_values, grad_mask):
        (mask,) = ctx.saved_tensors
        return grad_values * mask + grad_mask


class Mix(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        grad_x = grad_w = None
        if ctx.needs_input_grad[0]:
            grad_x = grad * w * 7
        if ctx.needs_input_grad[1]:
            grad_w = (grad * x).sum(0) * -1
        return grad_x, grad_w


class TimesExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.exp(), 3

    @staticmethod
    @once_differentiable
    def backward(ctx, grad, grad_number):
        (x,) = ctx.saved_tensors
        return grad * x * 2


class Estimators(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(3))

    def forward(self, x):
        y = StraightThrough.apply(x * self.weight * 3)
        return ClampPass.apply(y, -1.0, 1.0) + ScaledSquare.apply(self.weight, 2)


class Marked(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(3))

    def forward(self, x):
        values, mask = WithIndex.apply(x * self.weight)
        return values.tanh(), mask


class Mixed(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(3))

    def forward(self, x):
        return Mix.apply(x, self.weight).tanh()


class Once(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(3))

    def forward(self, x):
        y, n = TimesExp.apply(x * self.weight)
        return y * n


def example_inputs():
    return (torch.randn(4, 3),)
