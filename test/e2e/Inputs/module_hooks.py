"""Forward hooks and pre-hooks, on modules and for every module, run around
forward as eager runs them (test_module_hooks.py)."""
import torch
from torch import nn


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, shift=0.0):
        return self.fc(x) + shift


def global_pre(module, args):
    if isinstance(module, Scaled):
        return (args[0] + 1,)
    return None


def global_post(module, args, output):
    if isinstance(module, Scaled):
        return output * 3
    return None


# Every module's call in this process runs these.
GLOBAL_HANDLES = [nn.modules.module.register_module_forward_pre_hook(global_pre),
                  nn.modules.module.register_module_forward_hook(global_post)]


def halve(module, args):
    return args[0] / 2


def add_shift(module, args, kwargs):
    return args, {**kwargs, "shift": 0.25}


def observe(module, args, output):
    return None


def squash(module, args, output):
    return torch.tanh(output)


def negate(module, args, output):
    return -output


class Offset:
    def __init__(self, amount):
        self.amount = amount

    def __call__(self, module, args, output):
        return output + self.amount


class Hooked(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.first = Scaled()
        self.second = Scaled()
        self.plain = nn.Linear(4, 2)
        self.handles = {
            "halve": self.first.register_forward_pre_hook(halve),
            "shift": self.first.register_forward_pre_hook(add_shift, with_kwargs=True),
            "observe": self.first.register_forward_hook(observe),
            "squash": self.first.register_forward_hook(squash, always_call=True),
            "offset": self.second.register_forward_hook(Offset(0.5), prepend=True),
            "scale": self.second.register_forward_hook(self.scale_by_kwarg, with_kwargs=True),
        }

    def scale_by_kwarg(self, module, args, kwargs, output):
        return output * kwargs.get("shift", 2.0)

    def forward(self, x):
        return self.plain(self.second(self.first(x)))


def example_inputs():
    return (torch.randn(3, 4),)
