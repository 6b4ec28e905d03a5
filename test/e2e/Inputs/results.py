"""Small functions covering each shape of return value the rewritten bytecode
rebuilds, and the frame layouts its prologue must reproduce."""
import torch


def example_inputs():
    return [torch.randn(4, 3)]


def two_inputs():
    return [torch.randn(4, 3), torch.randn(4, 3)]


def single(x):
    return x.relu()


def returns_input(x):
    return x


def returns_tuple(x):
    return x.relu(), x.sum(0)


def one_tuple(x):
    return (x + 1,)


def nested_list_with_none(x):
    y = x * 2
    return [y, [x.neg(), None], (y, "done")]


def constants(x):
    return x.cos(), 3, -7, 2.5, True, None, "text", ()


def sizes(x):
    n = x.shape[0]
    return x.view(-1), n * 3 - 1, n // 2, n % 3, x.size(1), -n, [n, (n + x.shape[1],)]


def keyword_only(x, *, scale=2, shift=0.5):
    return x * scale + shift, scale


def star_args(x, *rest):
    return x + rest[0], len(rest)


def cell_argument(x):
    twice = lambda: x * 2  # noqa: E731 - x is a cell of this frame
    return twice() + x


def make_shifted(factor):
    def shifted(x):
        return x * factor + 1

    return shifted


# A closure at module level: its code has a free variable.
shifted = make_shifted(3)


def only_ints(x):
    return x.shape[0] * 2, x.shape[1]
