# The rewritten code of each entry of pyrt_model.py, as codegen would emit it:
# same qualified names and signatures, different results.
import torch


def scale(x):
    return x * 2


def linear(x, w, b):
    return __dync_graph_linear_0(b, x, w)[0]  # noqa: F821 - bound by the runtime


def mixed(a, /, b, *args, c=3, **kw):
    return ("rewritten", a, b, args, c, kw)


def countdown(x, n):
    # Recursion into the served function goes through the hook again.
    if n == 0:
        return x + 100
    return countdown(x, n - 1)  # noqa: F821


class Model(torch.nn.Module):
    def forward(self, x):
        return x * 2


def numbers(x):
    yield x * 2
