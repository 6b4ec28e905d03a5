# Slices of module containers keep their children's sources: the parameters
# of `self.layers[1:][::-2]` are graph inputs read from the container, and
# the keys of its table are guarded (which positions a slice takes depends
# on them). functools.partial is modeled as _functools makes it. What stays
# refused says why.
# RUN: %dync export %s:Stack.forward %s:flattened --emit=guards | FileCheck %s
# Each refused program is an entry of one export that goes on past each
# refusal, and each refusal is reported at its line, in entry order.
# RUN: not %dync export %s:DictSlice.forward %s:not_callable %s:returns_id %s:vars_of_locals \
# RUN:   %s:pick_by_globals --keep-going --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefixes=DICT,CALLABLE,ID,VARS,GLOBALS
# A real partial's fields are read-only members of a C type, fixed when it
# was made: read for real, not refused as unguardable descriptors.
# RUN: %dync export %s:real_partial_fields --emit=graph | FileCheck %s --check-prefix=REAL
from functools import partial

import torch
from torch import nn


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(4)])

    def forward(self, x):
        for layer in self.layers[1:][::-2]:
            x = layer(x)
        return x

# Positions 3 and 1, in that order; 0 and 2 are not read.
# CHECK-LABEL: guards @Stack.forward
# CHECK-NEXT: tensor L['x']
# CHECK-NEXT: tensor L['self']._modules['layers']._modules['3']._parameters['weight']
# CHECK-NEXT: tensor L['self']._modules['layers']._modules['3']._parameters['bias']
# CHECK-NEXT: tensor L['self']._modules['layers']._modules['1']._parameters['weight']
# CHECK-NEXT: tensor L['self']._modules['layers']._modules['1']._parameters['bias']
# CHECK-NOT: _modules['0']
# CHECK-NOT: _modules['2']
# CHECK: type L['self']._modules['layers'] : torch.nn.modules.container:ModuleList
# CHECK: keys L['self']._modules['layers']._modules : ["0", "1", "2", "3"]


def scaled(x, y, scale=1.0):
    return x * scale + y


def flattened(x):
    inner = partial(scaled, x)
    outer = partial(inner, scale=3.0)
    assert outer.func is scaled and len(outer.args) == 1
    return outer(x)

# CHECK-LABEL: guards @flattened


TRIPLED = partial(scaled, scale=3.0)


def real_partial_fields(x):
    return TRIPLED.func(x, x, **TRIPLED.keywords) + len(TRIPLED.args)

# REAL:      graph @real_partial_fields(
# REAL:        aten::mul.Tensor(%x, 3.0)


class DictSlice(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleDict({"a": nn.Identity()})

    def forward(self, x):
        return self.heads[:1]

# ModuleDict's own __getitem__ refuses a slice, as in eager.
# DICT: module-slices-and-partials.py:[[@LINE-3]]:16: error: slicing L['self']._modules['heads']: TypeError: unhashable type: 'slice'


def not_callable(x):
    return partial(3)(x)

# CALLABLE: module-slices-and-partials.py:[[@LINE-2]]:12: error: TypeError: the first argument must be callable


def returns_id(x):
    return x, id(x)

# An id() is a number of capture's own, not the object's id when the
# artifact runs: returning one is refused.
# ID: error: returns_id: the function returns a constant value, which a graph cannot return


def vars_of_locals(x):
    return vars()

# VARS: module-slices-and-partials.py:[[@LINE-2]]:12: error: vars() without an argument (the caller's local variables) is not supported


def doubled(x):
    return x * 2


def pick_by_globals(x, scheme="doubled"):
    return globals()[scheme](x)

# GLOBALS: module-slices-and-partials.py:[[@LINE-2]]:12: error: globals() is not supported yet: it is the module's whole namespace, which the compiled code cannot check entry by entry; keep the functions to choose from in a dict at module level ({'name': function}) and index that, or call the function by its name


def example_inputs():
    return (torch.ones(2),)
