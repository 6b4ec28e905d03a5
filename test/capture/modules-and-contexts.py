# nn.Modules made in forward from constants are made for real (a fresh one
# is in training mode, as in eager) and inlined; one with parameters is
# refused. Context managers written in Python (contextlib.nullcontext, the
# program's own class) run their __enter__ and __exit__ inlined;
# @contextlib.contextmanager pauses its generator at its yield.
# RUN: %dync export %s:modules_in_forward %s:contexts --emit=graph | FileCheck %s
# RUN: not %dync export %s:module_with_parameters --emit=graph 2>&1 | FileCheck %s --check-prefix=PARAMS
# RUN: %dync export %s:generator_context --emit=graph | FileCheck %s --check-prefix=GENERATOR
import contextlib

import torch
from torch import nn


def modules_in_forward(x):
    y = nn.Softmax(dim=-1)(x)
    return nn.MaxPool2d(2)(y.unsqueeze(0)), nn.Identity()(x)

# CHECK-LABEL: graph @modules_in_forward(
# CHECK:       aten::amax.default(%x, [-1], true)
# CHECK:       aten::exp.default(
# CHECK:       aten::max_pool2d_with_indices.default(
# CHECK:       return ({{.*}}, %x)


class Scaled:
    def __init__(self, factor):
        self.factor = factor
        self.entered = False

    def __enter__(self):
        self.entered = True
        return self.factor

    def __exit__(self, *exc):
        self.entered = False
        return False


def contexts(x):
    with contextlib.nullcontext(x) as same:
        y = same + 1
    scaled = Scaled(3.0)
    with scaled as factor:
        y = y * factor
    return y, scaled.entered

# CHECK-LABEL: graph @contexts(
# CHECK:       %[[Y:[0-9]+]] = aten::add.Tensor(%x, 1)
# CHECK:       aten::mul.Tensor(%[[Y]], 3.0)
# CHECK:       return ({{.*}}, false)


def module_with_parameters(x):
    return nn.Linear(4, 4)(x)

# PARAMS: modules-and-contexts.py:[[@LINE-2]]:12: error: constructing module class 'torch.nn.modules.linear.Linear' while capturing is not supported: it has parameters, made anew on every call; build it in __init__


@contextlib.contextmanager
def doubled(x):
    yield x * 2


def generator_context(x):
    with doubled(x) as y:
        return y

# A @contextlib.contextmanager's generator pauses at its yield while the
# block runs: the block sees what it yields.
# GENERATOR:      graph @generator_context(
# GENERATOR-NEXT: %0 = aten::mul.Tensor(%x, 2)
# GENERATOR-NEXT: return %0


def example_inputs():
    return (torch.randn(4, 4),)
