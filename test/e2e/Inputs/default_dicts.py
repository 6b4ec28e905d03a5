"""defaultdicts made in forward: a cache of lists filled and summed, counts
kept with `+=` on missing keys, a nested factory, a subclass with a method
of its own and a Python __missing__ override, a factory-less defaultdict
raising KeyError that the program catches, and the result returned as
`dict(d)`."""
import torch
from collections import defaultdict
from torch import nn


class Groups(defaultdict):
    def total(self):
        return sum(sum(v) for v in self.values())


class Tagged(defaultdict):
    def __missing__(self, key):
        value = self[key] = [key * 1.0]
        return value


class Cached(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 3)

    def forward(self, x):
        cache = defaultdict(list)
        for i in range(4):
            cache[i % 2].append(self.proj(x) * i)
        counts = defaultdict(int)
        for word in ["a", "b", "a"]:
            counts[word] += 1
        nested = defaultdict(lambda: defaultdict(float))
        nested["x"]["y"] += 2.0
        groups = Groups(list, first=[x])
        groups["second"].append(x * 3)
        tagged = Tagged(list)
        try:
            defaultdict()["missing"]
            caught = False
        except KeyError:
            caught = True
        out = sum(cache[0]) + sum(cache[1]) * counts["a"] + nested["x"]["y"] + groups.total()
        return out, dict(counts), len(cache[7]), tagged[2], cache.default_factory is list, caught


def example_inputs():
    return (torch.randn(2, 3),)
