"""Module hooks, on the module itself, on a submodule, and global ones."""
import torch
from torch import nn


class Hooked(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.out = nn.Linear(6, 3)

    def forward(self, x):
        return self.out(torch.relu(self.fc(x)))


def example_inputs():
    return (torch.randn(4, 6),)


def double_output(module, args, output):
    return output * 2


def shift_input(module, args):
    return (args[0] + 1,)


def add_one(module, args, output):
    return output + 1


def keyword_scale(module, args, kwargs, output):
    return output * 0.5


class HookedAtExport(nn.Module):
    """Hooks registered when the model is built, so the artifact runs them:
    a pre-hook on fc, a forward hook and a keyword forward hook on out."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.out = nn.Linear(6, 3)
        self.pre = self.fc.register_forward_pre_hook(shift_input)
        self.post = self.out.register_forward_hook(double_output)
        self.keyword = self.out.register_forward_hook(keyword_scale, with_kwargs=True)

    def forward(self, x):
        return self.out(torch.relu(self.fc(x)))


def flexible(module, args, *rest):
    """A forward hook that takes keywords or not: (output,) or (kwargs,
    output) after the arguments."""
    return rest[-1] * (3.0 if len(rest) == 2 else 2.0)


class HookedFlags(nn.Module):
    """A plain forward hook that could take keywords, then a keyword one."""

    def __init__(self):
        super().__init__()
        self.out = nn.Linear(6, 3)
        self.first = self.out.register_forward_hook(flexible)
        self.second = self.out.register_forward_hook(keyword_scale, with_kwargs=True)

    def forward(self, x):
        return self.out(torch.relu(x))


def flexible_shift(module, args, *rest):
    """A forward hook that takes keywords or not and shifts the output by
    a different amount in each case."""
    return rest[-1] + (1.0 if len(rest) == 2 else 0.5)


class HookedSwap(nn.Module):
    """Two forward hooks that both may take keywords, the second with them:
    swapping which one does keeps the keyword table's length."""

    def __init__(self):
        super().__init__()
        self.out = nn.Linear(6, 3)
        self.first = self.out.register_forward_hook(flexible)
        self.second = self.out.register_forward_hook(flexible_shift, with_kwargs=True)

    def forward(self, x):
        return self.out(torch.relu(x))
