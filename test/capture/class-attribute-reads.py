# What a class gives an object made while capturing is read through the
# class by name, so that a class attribute changed after export misses:
# a NamedTuple's _fields, _field_defaults and _asdict, a constant and a
# method of its class body, what a subclass inherits (the subclass pinned
# not to hold the name), a dataclass's constant and method. Reads of a
# class defined in a function, which no name reaches, are not guarded.
# RUN: %dync export %s:named --emit=guards | FileCheck %s --check-prefix=NAMED
# RUN: %dync export %s:named --emit=graph | FileCheck %s --check-prefix=GRAPH
# RUN: %dync export %s:inherited --emit=guards | FileCheck %s --check-prefix=INHERITED
# RUN: %dync export %s:made --emit=guards | FileCheck %s --check-prefix=MADE
# RUN: %dync export %s:local --emit=guards | FileCheck %s --check-prefix=LOCAL
from dataclasses import dataclass
from typing import NamedTuple, Optional

import torch


class Scores(NamedTuple):
    logits: torch.Tensor
    value: torch.Tensor
    loss: Optional[torch.Tensor] = None
    SCALE = 2.0

    def scaled(self):
        return self.logits * self.SCALE


class Ranked(Scores):
    __slots__ = ()

    def top(self):
        return self.logits.amax(-1)


@dataclass
class Batch:
    features: torch.Tensor
    BIAS = 0.5

    def shifted(self):
        return self.features + self.BIAS


def named(x):
    out = Scores(logits=x * 2, value=x.sum(-1))
    d = out._asdict()
    return d, out.scaled(), out._field_defaults

# NAMED-LABEL: guards @named
# NAMED: function G['Scores']._asdict : collections:namedtuple.<locals>._asdict
# NAMED: type G['Scores']._fields : builtins:tuple
# NAMED: length G['Scores']._fields : 3
# NAMED: equals G['Scores']._fields[0] : "logits"
# NAMED: equals G['Scores']._fields[1] : "value"
# NAMED: equals G['Scores']._fields[2] : "loss"
# NAMED: function G['Scores'].scaled : "class-attribute-reads":Scores.scaled
# NAMED: equals G['Scores'].SCALE : 2.0
# NAMED: type G['Scores']._field_defaults : builtins:dict
# NAMED: keys G['Scores']._field_defaults : ["loss"]
# NAMED: none G['Scores']._field_defaults['loss']

# GRAPH-LABEL: graph @named
# GRAPH: %0 = aten::mul.Tensor(%x, 2)
# GRAPH: %1 = aten::sum.dim_IntList(%x, [-1])
# GRAPH: %2 = aten::mul.Tensor(%0, 2.0)
# GRAPH: return ({"logits": %0, "value": %1, "loss": none}, %2, {"loss": none})


def inherited(x):
    out = Ranked(x, x.sum(-1))
    return out.top(), out._fields, out.SCALE

# INHERITED-LABEL: guards @inherited
# INHERITED: function G['Ranked'].top : "class-attribute-reads":Ranked.top
# INHERITED: absent G['Ranked']._fields
# INHERITED: equals G['Scores']._fields[0] : "logits"
# INHERITED: absent G['Ranked'].SCALE
# INHERITED: equals G['Scores'].SCALE : 2.0


def made(x):
    batch = Batch(x)
    return batch.shifted() * batch.BIAS

# MADE-LABEL: guards @made
# MADE: function G['Batch'].shifted : "class-attribute-reads":Batch.shifted
# MADE: equals G['Batch'].BIAS : 0.5


def local(x):
    class Pair(NamedTuple):
        a: torch.Tensor
        b: torch.Tensor

    p = Pair(x, x + 1)
    return len(p._fields) * p.a

# LOCAL-LABEL: guards @local
# LOCAL-NOT: _fields
# LOCAL: grad_mode


def example_inputs():
    return (torch.randn(3, 4),)
