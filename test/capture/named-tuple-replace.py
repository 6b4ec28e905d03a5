# A classmethod read from a tuple value binds to the tuple's class, as
# Python binds it: a named tuple's _replace calls self._make, and _make
# read from an instance builds the class from an iterable. The graph holds
# the arithmetic alone; the tuples are rebuilt around it.
# RUN: %dync export %s:replaced --emit=graph | FileCheck %s
from typing import NamedTuple, Optional

import torch


class Scores(NamedTuple):
    logits: torch.Tensor
    value: torch.Tensor
    loss: Optional[torch.Tensor] = None


def replaced(x):
    out = Scores(logits=x * 2, value=x.sum(-1))
    out = out._replace(loss=out.logits.exp().mean())
    swapped = out._make([out.value, out.logits, out.loss])
    return out, swapped.logits + 1

# CHECK-LABEL: graph @replaced
# CHECK: %0 = aten::mul.Tensor(%x, 2)
# CHECK: %1 = aten::sum.dim_IntList(%x, [-1])
# CHECK: %2 = aten::exp.default(%0)
# CHECK: %3 = aten::mean.default(%2)
# CHECK: %4 = aten::add.Tensor(%1, 1)
# CHECK: return ({{.*}}Scores(%0, %1, %3), %4)


def example_inputs():
    return (torch.randn(3, 4),)
