"""Entries whose inputs are containers, ints and sizes, for
test_capture_inputs.py."""
import torch
from torch import nn


class ListSum(nn.Module):
    def forward(self, xs):
        out = xs[0]
        for x in xs[1:]:
            out = out + x
        return out


class TupleScale(nn.Module):
    def forward(self, xs):
        return xs[0] * len(xs)


class DictMix(nn.Module):
    def forward(self, d):
        out = torch.zeros(3)
        for key, value in d.items():
            out = out + value * len(key)
        return out


class IntArg(nn.Module):
    def forward(self, x, n: int):
        return x * n + n


def broadcast(x, y):
    shape = torch.broadcast_shapes(x.shape, y.shape)
    return x.expand(shape) * 2 + y.expand(torch.Size([shape[0], shape[1]]))


def list_inputs():
    return ([torch.randn(3), torch.randn(3)],)


def tuple_inputs():
    return ((torch.randn(3), torch.randn(3)),)


def dict_inputs():
    return ({"a": torch.randn(3), "bb": torch.randn(3)},)


def int_inputs():
    return (torch.randn(3), 4)


def broadcast_inputs():
    return (torch.randn(4, 1), torch.randn(4, 3))
