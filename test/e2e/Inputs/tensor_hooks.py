"""Models that register gradient hooks on tensors they compute, as
domain-adversarial training reverses the features' gradient, MuZero scales
its hidden state's, and training code clips or replaces gradients. Used by
test_tensor_hooks.py."""
import torch
from torch import nn

from tensor_hook_layers import GradientReversal


class Reversal(nn.Module):
    """Gradient reversal with a coefficient read when backward runs."""

    def __init__(self):
        super().__init__()
        self.features = nn.Linear(4, 5)
        self.head = nn.Linear(5, 2)
        self.alpha = 0.5

    def forward(self, x):
        f = torch.relu(self.features(x))
        if f.requires_grad:
            f.register_hook(lambda g: -self.alpha * g)
        return self.head(f).sum(-1)


class Imported(nn.Module):
    """A reversal layer from another module, its hook closing over a local."""

    def __init__(self):
        super().__init__()
        self.features = nn.Linear(4, 5)
        self.reverse = GradientReversal(0.25)
        self.head = nn.Linear(5, 2)

    def forward(self, x):
        return self.head(self.reverse(torch.tanh(self.features(x)))).sum(-1)


def double(grad):
    return grad * 2


class Several(nn.Module):
    """Hooks that run in the order registered (a module function, a lambda,
    a method), one replacing the gradient of a view, one closing over a
    tensor the function computed and taking a default."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 5)
        self.head = nn.Linear(5, 2)
        self.limit = 0.05

    def clip(self, grad):
        return grad.clamp(-self.limit, self.limit)

    def forward(self, x):
        h = self.lin(x)
        first = h[:, 0]
        mask = (x[:, :1] > 0).float()
        if h.requires_grad:
            h.register_hook(double)
            h.register_hook(lambda g: g + 0.01)
            h.register_hook(self.clip)
            first.register_hook(lambda g: torch.full_like(g, 3.0))

            def masked(g, scale=0.25):
                return g * mask * scale

            h2 = h * 2
            h2.register_hook(masked)
        else:
            h2 = h * 2
        return self.head(h2).sum(-1) + first * 0.1


class AccumulatedScale(nn.Module):
    """A post-accumulate hook on a parameter, registered at every call as
    the program does, each scaling the accumulated gradient."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 2)
        self.scale = 0.5

    def forward(self, x):
        if self.lin.weight.requires_grad:

            def scale(p):
                p.grad.mul_(self.scale)

            self.lin.weight.register_post_accumulate_grad_hook(scale)
        return self.lin(x).sum(-1)


def example_inputs():
    return (torch.randn(6, 4, generator=torch.Generator().manual_seed(0)),)
