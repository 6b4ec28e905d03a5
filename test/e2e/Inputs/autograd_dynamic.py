"""Custom autograd.Functions in models exported with a dynamic batch: the
backward graph serves every batch size the entry serves. A gradient
reversal layer (domain adaptation), a straight-through sign estimator over
a saved input, a custom activation whose backward reads a tensor set on
ctx, and a Function whose backward broadcasts a per-feature gradient back
to the batch through the sizes it kept on ctx."""
import torch
from torch import nn


class GradientReversal(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad.neg() * ctx.alpha, None


class SignSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sign(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (x.abs() <= 1).to(grad.dtype)


class Swish(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        sig = torch.sigmoid(x)
        ctx.sig = sig
        ctx.save_for_backward(x)
        return x * sig

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (ctx.sig * (1 + x * (1 - ctx.sig)))


class FeatureMean(torch.autograd.Function):
    """The mean over the batch; backward spreads a doubled gradient over
    the batch size forward kept."""

    @staticmethod
    def forward(ctx, x):
        ctx.shape = x.shape
        return x.mean(0)

    @staticmethod
    def backward(ctx, grad):
        return (2 * grad / ctx.shape[0]).expand(ctx.shape)


class Domain(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Linear(6, 8)
        self.classifier = nn.Linear(8, 3)

    def forward(self, x):
        h = torch.relu(self.features(x))
        return self.classifier(GradientReversal.apply(h, 0.3))


class Binary(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 8)
        self.out = nn.Linear(8, 2)

    def forward(self, x):
        return self.out(SignSTE.apply(self.fc(x)))


class Activation(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        return Swish.apply(self.fc(x)).sum(1)


class Pooled(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 5)

    def forward(self, x):
        h = self.fc(x)
        return h * FeatureMean.apply(h)


def example_inputs():
    return (torch.randn(4, 6),)
