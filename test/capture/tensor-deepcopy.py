# copy.deepcopy of a tensor, which dataclasses.asdict and astuple apply to
# every leaf, is a clone (the copy does not alias the original), as eager
# makes it for a tensor that does not require grad. A tensor computed with
# grad raises eager's RuntimeError; a leaf that requires grad (a
# parameter), which eager copies into a new leaf, and a view that is not
# dense, whose strides a clone would not keep, are refused.
# RUN: %dync export %s:packed --emit=graph | FileCheck %s
# RUN: not %dync export %s:WithGrad.forward --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefix=NONLEAF
# RUN: not %dync export %s:Parameter.forward --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefix=PARAMETER
# RUN: not %dync export %s:strided --emit=graph 2>&1 | FileCheck %s --check-prefix=STRIDED
import copy
import dataclasses
from dataclasses import dataclass, field

import torch
from torch import nn


@dataclass
class Out:
    logits: torch.Tensor
    tags: list = field(default_factory=list)


def packed(x):
    out = Out(x * 2, ["a"])
    d = dataclasses.asdict(out)
    t = dataclasses.astuple(out)
    return d, t, out.logits

# CHECK-LABEL: graph @packed
# CHECK: %0 = aten::mul.Tensor(%x, 2)
# CHECK: %1 = aten::clone.default(%0)
# CHECK: %2 = aten::clone.default(%0)
# CHECK: return ({"logits": %1, "tags": ["a"]}, (%2, ["a"]), %0)


class WithGrad(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return dataclasses.asdict(Out(self.lin(x)))

# NONLEAF: tensor-deepcopy.py:[[# @LINE - 2]]:16: error: RuntimeError: Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol


class Parameter(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return copy.deepcopy(self.lin.weight) + x

# PARAMETER: tensor-deepcopy.py:[[# @LINE - 2]]:16: error: copy.deepcopy of a tensor that requires grad (a parameter, or an input that requires grad) makes a new leaf tensor that requires grad, which a graph cannot make yet: copy it with .detach().clone() instead


def strided(x):
    return copy.deepcopy(x[:, ::2])

# STRIDED: tensor-deepcopy.py:[[# @LINE - 2]]:12: error: copy.deepcopy of a tensor view that is not dense (strides (4, 2)) is not supported: eager's copy keeps the view's strides, a graph's clone does not; copy it with .clone() instead


def example_inputs():
    return (torch.randn(3, 4),)
