"""Plain-Python plumbing as research code bases write it around a small
detector neck (detectron2 / mmdet / fairseq habits): a generator helper
`pairwise(xs)` yielding neighbouring levels, a `@contextlib.contextmanager`
that temporarily sets an attribute on the module and restores it in
`finally`, `functools.reduce(operator.add, ...)` over a generator
expression, a walrus in a comprehension's condition, a `match` statement
on a string option, a dict comprehension with f-string keys, a method
under the `@torch.no_grad()` decorator computing statistics from the
features, `functools.lru_cache` on a function of ints building the
level strides, `itertools.accumulate` of channel counts splitting a
`torch.cat` back by `torch.split`, and `*rest` unpacking of the levels."""
import contextlib
import functools
import itertools
import math
import operator

import torch
import torch.nn as nn
import torch.nn.functional as F


def pairwise(xs):
    it = iter(xs)
    prev = next(it)
    for x in it:
        yield prev, x
        prev = x


@functools.lru_cache(maxsize=None)
def level_strides(num_levels, base=4):
    return tuple(base * 2 ** i for i in range(num_levels))


@contextlib.contextmanager
def temporarily(module, name, value):
    old = getattr(module, name)
    setattr(module, name, value)
    try:
        yield module
    finally:
        setattr(module, name, old)


class Neck(nn.Module):
    def __init__(self, in_channels=(8, 12, 16), out=12, fuse="sum"):
        super().__init__()
        self.offsets = list(itertools.accumulate(in_channels))
        self.lateral = nn.ModuleList(nn.Conv2d(c, out, 1) for c in in_channels)
        self.smooth = nn.ModuleList(nn.Conv2d(out, out, 3, padding=1) for _ in in_channels)
        self.fuse = fuse
        self.scale = 1.0
        self.head = nn.Conv2d(out, 3, 1)

    @torch.no_grad()
    def feature_stats(self, feats):
        return torch.stack([f.float().abs().mean() for f in feats])

    def merge(self, a, b):
        match self.fuse:
            case "sum":
                return a + b
            case "avg":
                return (a + b) / 2
            case other:
                raise ValueError(f"unknown fuse mode {other}")

    def forward(self, features):
        first, *rest = features
        stacked = torch.cat([first] + [F.interpolate(r, size=first.shape[-2:]) for r in rest], dim=1)
        pieces = torch.split(stacked, [o - p for p, o in zip([0] + self.offsets, self.offsets)], 1)
        lat = [l(f) for l, f in zip(self.lateral, features)]
        for high, low in reversed(list(pairwise(range(len(lat))))):
            lat[high] = self.merge(lat[high], F.interpolate(lat[low], size=lat[high].shape[-2:], mode="nearest"))
        with temporarily(self, "scale", 0.5):
            outs = [s(l) * self.scale for s, l in zip(self.smooth, lat)]
        strides = level_strides(len(outs))
        named = {f"p{int(math.log2(s))}": o for s, o in zip(strides, outs)}
        kept = [o for o in outs if (n := o.shape[-1]) >= 4 and n % 2 == 0]
        total = functools.reduce(operator.add, (o.mean() for o in kept))
        stats = self.feature_stats(features)
        return self.head(named["p2"]) + pieces[0].mean(1, keepdim=True), total, stats, len(pieces)


torch.manual_seed(0)
model = Neck().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return ([torch.randn(2, 8, 16, 16, generator=g), torch.randn(2, 12, 8, 8, generator=g),
             torch.randn(2, 16, 4, 4, generator=g)],)
