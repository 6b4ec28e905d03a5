# A module's or an object's namespace indexed by key (`vars(m)[k]`,
# `m.__dict__[k]`) is guarded on the entries read, as `m.k` is: the
# namespace's type and each entry read through it, not its keys or the
# entries never read. Taking its length (or iterating it) reads it whole.
# RUN: %dync export %s:from_module --emit=guards | FileCheck %s --check-prefix=MODULE
# RUN: %dync export %s:from_object --emit=guards | FileCheck %s --check-prefix=OBJECT
# RUN: %dync export %s:assigned_then_read --emit=guards | FileCheck %s --check-prefix=ASSIGNED
# RUN: %dync export %s:assigned_then_read --emit=graph | FileCheck %s --check-prefix=ASSIGNED-GRAPH
# RUN: %dync export %s:whole --emit=guards | FileCheck %s --check-prefix=WHOLE
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))

import torch

import namespace_settings


class State:
    def __init__(self):
        self.scale = 3.0
        self.unused = "never read"


state = State()


def from_module(x):
    return x * vars(namespace_settings)["SCALE"] + namespace_settings.__dict__["SCALE"]

# MODULE:      type G['namespace_settings'].__dict__ : builtins:dict
# MODULE-NEXT: equals G['namespace_settings'].__dict__['SCALE'] : 2.0
# MODULE-NOT:  keys G['namespace_settings'].__dict__
# MODULE-NOT:  __builtins__
# MODULE:      }


def from_object(x):
    return x * vars(state)["scale"]

# OBJECT:      type G['state'].__dict__ : builtins:dict
# OBJECT-NEXT: equals G['state'].__dict__['scale'] : 3.0
# OBJECT-NOT:  keys G['state'].__dict__
# OBJECT-NOT:  unused
# OBJECT:      }


def assigned_then_read(x):
    # What the program assigned is what the namespace holds: no guard.
    state.scale = 5.0
    return x * vars(state)["scale"]

# ASSIGNED:     type G['state'].__dict__ : builtins:dict
# ASSIGNED-NOT: G['state'].__dict__['scale']
# ASSIGNED:     }
# ASSIGNED-GRAPH: aten::mul.Tensor(%x, 5.0)
# ASSIGNED-GRAPH: after set G['state'].scale = 5.0


def whole(x):
    return x * len(vars(state))

# WHOLE:      type G['state'].__dict__ : builtins:dict
# WHOLE:      keys G['state'].__dict__ : ["scale", "unused"]
# WHOLE-NEXT: equals G['state'].__dict__['scale'] : 3.0
# WHOLE-NEXT: equals G['state'].__dict__['unused'] : "never read"


def example_inputs():
    return (torch.randn(3),)
