# PEP 584's dict merge: `a | b` is a new dict of a's items updated by b's,
# `a |= b` updates a itself; both as dict's own copy and update, so a held
# dict's keys are guarded and the program's dict is left as it was (`|`).
# A dict merged with what is not a dict is CPython's TypeError.
# RUN: %dync export %s:Model.forward --emit=graph | FileCheck %s
# RUN: %dync export %s:Model.forward --emit=guards | FileCheck %s --check-prefix=GUARDS
# RUN: not %dync export %s:merge_list --emit=graph 2>&1 | FileCheck %s --check-prefix=LIST
import torch
from torch import nn


def combine(x, scale=1.0, shift=0.0, **unused):
    return x * scale + shift


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.defaults = {"scale": 2.0, "shift": 1.0}

    def forward(self, x, **kwargs):
        # A copy: the held dict keeps its shift.
        options = self.defaults | {"shift": 3.0}
        options |= kwargs
        options |= [("extra", x)]
        return combine(x, **options), self.defaults["shift"], len(options)


def merge_list(x, scale=1.0):
    return {"a": x * scale} | [("b", x)]


def example_inputs():
    return (torch.randn(4),)


def example_kwargs():
    return {"scale": 5.0}

# The keyword overrides the held default, the literal its shift; the held
# dict still has its own shift, and the merged dict three entries.
# CHECK-LABEL: graph @Model.forward
# CHECK: %0 = aten::mul.Tensor(%x, 5.0)
# CHECK: %1 = aten::add.Tensor(%0, 3.0)
# CHECK: return (%1, 1.0, 3)

# GUARDS-DAG: equals L['kwargs']['scale'] : 5.0
# GUARDS-DAG: keys L['kwargs'] : ["scale"]
# GUARDS-DAG: keys L['self'].defaults : ["scale", "shift"]
# GUARDS-DAG: equals L['self'].defaults['shift'] : 1.0

# LIST: dict-merge.py:30:12: error: unsupported operand types for |: 'dict' and 'list'
# LIST-NEXT: return {"a": x * scale} | [("b", x)]
