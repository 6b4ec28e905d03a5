"""Functions that define classes while they run, for test_local_classes.py."""
import torch


def scale(x):
    k = 3

    class Scale:
        factor = 2.0

        def __init__(self, shift):
            self.shift = shift

        def apply(self, y):
            return torch.relu(y * self.factor * k + self.shift)

    return Scale(0.5).apply(x)


def closure(x):
    w = x.sin()

    class Uses:
        def f(self, y):
            return y * w

    w = w + 1
    return Uses().f(x)


def inherit(x):
    class Base:
        def f(self, y):
            return y.exp()

    class Derived(Base):
        def f(self, y):
            return super().f(y) - y

    return Derived().f(x)


def autograd_apply(x):
    class SoftClamp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, y, limit):
            ctx.save_for_backward(y)
            return limit * torch.tanh(y / limit)

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * (1 - torch.tanh(y) ** 2), None

    return SoftClamp.apply(x, 0.5)


def masked_sum(x, mask):
    # torch.masked defines an autograd.Function subclass on every call.
    return torch.masked.sum(x, 1, mask=mask)


def masked_softmax(x, mask):
    return torch.masked.softmax(x, 1, mask=mask)


def example_inputs():
    return (torch.randn(4, 5),)


def example_masked():
    return (torch.randn(4, 5), torch.randn(4, 5) > 0)
