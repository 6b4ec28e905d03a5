"""Grad-mode regions inside a program whose parameters require grad, for
test_grad_regions.py: what a region under no_grad computes does not require
grad and is cut from autograd, as in eager, while the rest records as usual."""
import torch
from torch import nn


class TargetUnderNoGrad(nn.Module):
    """A value target and a KL estimate computed under no_grad from tensors
    that require grad, then used with them (as RL losses do)."""

    def __init__(self):
        super().__init__()
        self.value = nn.Linear(6, 1)
        self.policy = nn.Linear(6, 3)

    def forward(self, x):
        v = self.value(x)
        with torch.no_grad():
            target = 0.9 * self.value(x * 0.5) + v.mean()
            kl = (v - target).pow(2).mean()
        logits = self.policy(x)
        loss = ((v - target) ** 2).mean() + logits.logsumexp(-1).mean() * target.mean()
        return loss, kl, target


class EnableInsideNoGrad(nn.Module):
    """enable_grad nested in no_grad: the inner block records again."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)

    def forward(self, x):
        h = self.fc(x)
        with torch.no_grad():
            s = h.sum(-1, keepdim=True)
            with torch.enable_grad():
                g = torch.tanh(h) * s + self.fc.bias
            t = g * 2
        return g + h * t


class SetGradEnabledCall(nn.Module):
    """torch.set_grad_enabled(False) called as a function, then (True)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)

    def forward(self, x):
        h = self.fc(x)
        torch.set_grad_enabled(False)
        scale = h.abs().amax() + self.fc.weight.norm()
        torch.set_grad_enabled(True)
        return h / scale


class InferenceModeBlock(nn.Module):
    """A shift computed in an inference_mode block, used where autograd
    saves nothing of it (subtraction), and a clone of it returned."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)

    def forward(self, x):
        h = self.fc(x)
        with torch.inference_mode():
            shift = h.mean(0)
        return h - shift, shift.clone()


class InPlaceUnderNoGrad(nn.Module):
    """In-place writes under no_grad to tensors that require grad: a
    computed one (clamped, keeping its history) and a parameter (scaled, as
    a weight clip does), both read again with grad mode on."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)

    def forward(self, x):
        h = self.fc(x)
        with torch.no_grad():
            h.clamp_(-0.5, 0.5)
            self.fc.weight.mul_(0.5)
        return torch.relu(h) + self.fc(x)


def detached_target(x, w):
    """A function whose inputs require grad (its example's do): a no_grad
    block over them, and gradients to both."""
    y = torch.tanh(x @ w)
    with torch.no_grad():
        baseline = y.mean(0, keepdim=True)
        x_norm = x.norm()
    return ((y - baseline) ** 2).sum() / x_norm, baseline


MODELS = ["TargetUnderNoGrad", "EnableInsideNoGrad", "SetGradEnabledCall", "InferenceModeBlock",
          "InPlaceUnderNoGrad"]


def example_inputs():
    return (torch.randn(5, 6),)


def example_pair():
    g = torch.Generator().manual_seed(3)
    return (torch.randn(5, 6, generator=g, requires_grad=True),
            torch.randn(6, 4, generator=g, requires_grad=True))
