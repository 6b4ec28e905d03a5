# torch.utils.checkpoint.checkpoint(fn, *args, use_reentrant=False) gives
# the values and gradients of fn(*args): capture calls fn in its place
# (keyword arguments other than checkpoint's own reach fn). The reentrant
# form, whose gradients reach fn's parameters only through inputs that
# require grad, and a context_fn are refused.
# RUN: %dync export %s:Model.forward --emit=graph | FileCheck %s
# RUN: not %dync export %s:Reentrant.forward --example reentrant_inputs --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefix=REENTRANT
# RUN: not %dync export %s:WithContext.forward --example reentrant_inputs --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefix=CONTEXT
import contextlib

import torch
import torch.utils.checkpoint
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)

    def forward(self, x, scale=1.0):
        return torch.tanh(self.linear(x)) * scale


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x):
        y = torch.utils.checkpoint.checkpoint(self.block, x, use_reentrant=False,
                                              preserve_rng_state=False, scale=2.0)
        return y + 1


# CHECK-LABEL: graph @Model.forward(
# CHECK-NOT: torch/utils/checkpoint.py
# CHECK: aten::addmm
# CHECK: aten::tanh
# CHECK: aten::mul.Tensor
# CHECK: aten::add.Tensor


class Reentrant(Model):
    def forward(self, x):
        return torch.utils.checkpoint.checkpoint(self.block, x, use_reentrant=True)


# REENTRANT: activation-checkpoint.py:[[@LINE-3]]:16: error: torch.utils.checkpoint.checkpoint is supported with use_reentrant=False only


def contexts():
    return contextlib.nullcontext(), contextlib.nullcontext()


class WithContext(Model):
    def forward(self, x):
        return torch.utils.checkpoint.checkpoint(self.block, x, use_reentrant=False, context_fn=contexts)


# CONTEXT: activation-checkpoint.py:[[@LINE-3]]:16: error: torch.utils.checkpoint.checkpoint with a context_fn is not supported


def example_inputs():
    return (torch.randn(3, 4),)


reentrant_inputs = example_inputs
