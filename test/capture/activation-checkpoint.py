# torch.utils.checkpoint.checkpoint(fn, *args, use_reentrant=False) gives
# the values and gradients of fn(*args): capture calls fn in its place
# (keyword arguments other than checkpoint's own reach fn). The reentrant
# form gives gradients only through tensor arguments that require grad:
# capture calls fn with grad where one does, and under no_grad where none
# does, so its result requires no grad. Keyword arguments for fn in the
# reentrant form (eager raises ValueError) and a context_fn are refused.
# RUN: %dync export %s:Model.forward --emit=graph | FileCheck %s
# RUN: %dync export %s:Reentrant.forward --example reentrant_inputs --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefix=REENTRANT
# RUN: %dync export %s:Reentrant.forward --example reentrant_grad_inputs --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefix=REENTRANT
# RUN: not %dync export %s:ReentrantKeywords.forward --example reentrant_inputs --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefix=REENTRANT-KEYWORDS
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


# REENTRANT-LABEL: graph @Reentrant.forward(
# REENTRANT-NOT: torch/utils/checkpoint.py
# REENTRANT: aten::addmm
# REENTRANT: aten::tanh
# REENTRANT: aten::mul.Tensor(%{{[0-9]+}}, 1.0)


class ReentrantKeywords(Model):
    def forward(self, x):
        return torch.utils.checkpoint.checkpoint(self.block, x, use_reentrant=True, scale=2.0)


# REENTRANT-KEYWORDS: activation-checkpoint.py:[[@LINE-3]]:16: error: torch.utils.checkpoint.checkpoint passes no keyword arguments ('scale') to the function in its reentrant form (use_reentrant=True, the default): eager raises ValueError; pass use_reentrant=False


def contexts():
    return contextlib.nullcontext(), contextlib.nullcontext()


class WithContext(Model):
    def forward(self, x):
        return torch.utils.checkpoint.checkpoint(self.block, x, use_reentrant=False, context_fn=contexts)


# CONTEXT: activation-checkpoint.py:[[@LINE-3]]:16: error: torch.utils.checkpoint.checkpoint with a context_fn is not supported


def example_inputs():
    return (torch.randn(3, 4),)


reentrant_inputs = example_inputs


def reentrant_grad_inputs():
    return (torch.randn(3, 4, requires_grad=True),)
