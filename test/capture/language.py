# Python the interpreter runs symbolically: calls with defaults, keywords,
# *args/**kwargs, closures, lambdas, comprehensions, generators, loops over
# containers, builtins, and methods of containers built while capturing.
# Each function is captured into its own graph in one run.
# RUN: %dync export %s:closures %s:star_args %s:comprehensions %s:loops \
# RUN:   %s:builtins %s:containers %s:strings %s:returns_tuple --emit=graph | FileCheck %s
import math

import torch
import torch.nn.functional as F


def scale(t, factor=2.0, *, shift=0.0):
    return t * factor + shift


def closures(x):
    k = 3

    def inner(t):
        return t + k

    twice = lambda t: inner(inner(t))
    return scale(twice(x), shift=1.0)

# CHECK-LABEL: graph @closures(%x: tensor<f32, [4, 3]> = L['x'])
# CHECK: aten::add.Tensor(%x, 3)
# CHECK: aten::add.Tensor(%{{[0-9]+}}, 3)
# CHECK: aten::mul.Tensor(%{{[0-9]+}}, 2.0)
# CHECK: aten::add.Tensor(%{{[0-9]+}}, 1.0)


def combine(*tensors, **options):
    out = tensors[0]
    for t in tensors[1:]:
        out = out + t
    if options.get("negate", False):
        out = -out
    return out


def star_args(x):
    parts = (x, x * 2)
    opts = {"negate": True}
    return combine(*parts, x, **opts)

# CHECK-LABEL: graph @star_args(
# CHECK: aten::mul.Tensor(%x, 2)
# CHECK: aten::add.Tensor
# CHECK: aten::add.Tensor
# CHECK: aten::neg.default


def comprehensions(x):
    rows = [x[i] for i in range(2)]
    squares = {i: r * r for i, r in enumerate(rows)}
    total = sum(v for v in squares.values())
    return torch.stack([total, *rows])

# CHECK-LABEL: graph @comprehensions(
# CHECK: aten::select.int(%x, 0, 0)
# CHECK: aten::select.int(%x, 0, 1)
# CHECK: aten::cat.default([%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}])


def loops(x):
    i = 0
    while i < 3:
        x = x + i
        i += 1
    for a, b in zip([1, 2], (3, 4)):
        x = x * (a + b)
    return x

# CHECK-LABEL: graph @loops(
# CHECK-COUNT-3: aten::add.Tensor
# CHECK: aten::mul.Tensor(%{{[0-9]+}}, 4)
# CHECK: aten::mul.Tensor(%{{[0-9]+}}, 6)


def builtins(x):
    n = len(x.shape)
    dims = tuple(range(n))
    assert isinstance(x, torch.Tensor) and hasattr(x, "shape")
    width = max(x.shape[-1], 2) + abs(-1) + int(math.sqrt(16.0))
    y = x.sum(dims[-1:]) * float(width)
    return F.relu(y) if getattr(x, "ndim") == 2 else y

# CHECK-LABEL: graph @builtins(
# CHECK: aten::sum.dim_IntList(%x, [1])
# CHECK: aten::mul.Tensor(%{{[0-9]+}}, 8.0)
# CHECK: aten::relu.default


def containers(x):
    items = []
    items.append(x)
    items.extend([x + 1])
    items.insert(0, x - 1)
    last = items.pop()
    d = dict(a=items[0], b=last)
    d.update(c=items[1])
    keys = sorted_keys(d)
    return torch.cat([d[k] for k in keys])


def sorted_keys(d):
    out = list(d.keys())
    return out

# CHECK-LABEL: graph @containers(
# CHECK: aten::add.Tensor(%x, 1)
# CHECK: aten::sub.Tensor(%x, 1)
# CHECK: aten::cat.default([%{{[0-9]+}}, %{{[0-9]+}}, %x])


def strings(x):
    mode = "sum"
    name = f"{mode}_{x.dim()}"
    if name == "sum_2" and mode in ("sum", "mean"):
        return x.sum()
    return x.mean()

# CHECK-LABEL: graph @strings(
# CHECK: aten::sum.dim_IntList(%x, [])


def returns_tuple(x):
    a, *rest = x.chunk(3, dim=1)
    return a, rest, x.shape[0]

# CHECK-LABEL: graph @returns_tuple(
# CHECK: %[[SPLIT:[0-9]+]] = aten::split_with_sizes.default(%x, [1, 1, 1], 1)
# CHECK: return (%[[SPLIT]]#0, [%[[SPLIT]]#1, %[[SPLIT]]#2], 4)


def example_inputs():
    return (torch.randn(4, 3),)
