# Attributes a program assigns on objects that exist outside capture (a
# library's state object) are kept in capture's own state: reads see the
# assignment, the real object is untouched while capturing, and what the
# function leaves there is assigned after the graph (`after set`). What the
# attribute held before is not read, so not guarded. An object whose class
# decides what assignment does stops capture with the attribute and the
# reason.
# RUN: %dync export %s:restores --emit=graph | FileCheck %s
# RUN: %dync export %s:restores --emit=guards | FileCheck %s --check-prefix=GUARDS
# RUN: %dync export %s:leaves_changed --emit=graph 2>&1 | FileCheck %s --check-prefix=CHANGED
# RUN: not %dync export %s:custom_setattr --emit=graph 2>&1 | FileCheck %s --check-prefix=SETATTR
import torch


class State:
    def __init__(self):
        self.scale = None
        self.enabled = False


class Logged:
    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)


state = State()
logged = Logged()


def example_inputs():
    return (torch.ones(2),)


def restores(x):
    state.scale = 2.0
    state.enabled = True
    y = x * state.scale if state.enabled else x
    state.scale = None
    state.enabled = False
    return y

# The graph multiplies by the assigned 2.0; the attributes are set to what
# the function leaves, which eager also leaves whatever they held before.
# CHECK: aten::mul.Tensor
# CHECK: return
# CHECK-NEXT: after set G['state'].scale = none
# CHECK-NEXT: after set G['state'].enabled = false
# GUARDS-NOT: G['state'].


def leaves_changed(x):
    state.enabled = True
    return x + 1

# CHANGED: return
# CHANGED-NEXT: after set G['state'].enabled = true


def custom_setattr(x):
    logged.count = 1
    return x

# SETATTR: real-attributes.py:[[@LINE-3]]:5: error: assigning attribute 'count' of G['logged'] (its class defines __setattr__; a side effect outside the graph)
