"""Functions of containers and Python scalars."""
import torch


def seq_sum(xs):
    out = xs[0]
    for t in xs[1:]:
        out = out * 2 + t
    return out


def by_key(d):
    out = 0
    for i, key in enumerate(d):
        if key.startswith("a"):
            out = out + d[key] * (i + 1)
        else:
            out = out - d[key] * (i + 1)
    return out


def maybe_bias(x, bias):
    if bias is None:
        return x * 2
    return x * 2 + bias


def scalars(x, n, f, b, s):
    y = x * f
    if b:
        y = y + n
    if s == "sub":
        y = y - 1
    return y.repeat(n, 1)


def example_seq_sum():
    return ([torch.randn(4, 3), torch.randn(4, 3)],)


def example_by_key():
    return ({"a": torch.randn(3), "b": torch.randn(3)},)


def example_maybe_bias():
    return (torch.randn(4, 3), torch.randn(3))


def example_scalars():
    return (torch.randn(2, 3), 2, 1.5, True, "add")
