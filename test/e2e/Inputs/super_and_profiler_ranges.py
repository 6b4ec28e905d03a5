"""Descriptors read through super() (a property of a base class, a
torch.distributions parent's `logits`, a descriptor class written in
Python) and profiler ranges (`record_function` blocks, nn.DataParallel's
forward on CPU, which opens one). Used by
test/capture/super-and-profiler-ranges.py and
test/e2e/test_super_and_profiler_ranges.py."""
import torch
import torch.distributions as td
import torch.nn.functional as F
from torch import nn


class Tripled:
    def __get__(self, instance, owner):
        return instance.weight * 3


class Base(nn.Module):
    tripled = Tripled()

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.linspace(-1.0, 1.0, 4))

    @property
    def scale(self):
        return self.weight * 2


class Derived(Base):
    @property
    def scale(self):
        return super().scale + 1

    def forward(self, x):
        return x * self.scale + super().tripled


class StraightThroughOneHot(td.OneHotCategorical):
    def mode(self):
        hard = F.one_hot(torch.argmax(super().logits, -1), super().logits.shape[-1])
        return hard.detach() + super().logits - super().logits.detach()


class CategoricalHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 5)

    def forward(self, x):
        dist = StraightThroughOneHot(logits=self.proj(x), validate_args=False)
        return dist.mode(), dist.entropy()


class Ranged(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.DataParallel(nn.Sequential(nn.Linear(4, 4), nn.Tanh()))

    def forward(self, x):
        with torch.autograd.profiler.record_function("scaled"):
            y = self.inner(x) * 2
        return y + 1


def example_inputs():
    return (torch.randn(3, 4, generator=torch.Generator().manual_seed(0)),)
