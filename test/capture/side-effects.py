# Changes to objects that exist before the call are recorded while
# capturing and listed after the graph's return, one `after` line each, in
# the order the program first made them; the rewritten code replays them on
# the real objects after the graph runs. Reads later in the capture see the
# new values; only reads made before a change are guarded, at their entry
# values.
# RUN: %dync export %s:Block.forward --emit=graph --dynamic 'x:0=n[2,64]' | FileCheck %s --check-prefix=ATTRS
# RUN: %dync export %s:Block.forward --emit=guards --dynamic 'x:0=n[2,64]' | FileCheck %s --check-prefix=ATTRS-GUARDS
# RUN: %dync export %s:containers --example containers_inputs --emit=graph | FileCheck %s --check-prefix=CONTAINERS
# RUN: %dync export %s:containers --example containers_inputs --emit=guards | FileCheck %s --check-prefix=CONTAINERS-GUARDS
# RUN: %dync export %s:globals_ --emit=graph | FileCheck %s --check-prefix=GLOBALS
# RUN: %dync export %s:globals_ --emit=guards | FileCheck %s --check-prefix=GLOBALS-GUARDS
# RUN: %dync export %s:restores --emit=graph | FileCheck %s --check-prefix=RESTORES
# RUN: %dync export %s:restores --emit=guards | FileCheck %s --check-prefix=RESTORES-GUARDS
# RUN: %dync export %s:speculated --emit=graph | FileCheck %s --check-prefix=SPECULATED
import torch
from torch import nn

calls = 0
last = None


class Info:
    def __init__(self, rows):
        self.rows = rows


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.shift_size = 3
        self.window_size = 7
        self.count = 0
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        # Swin's set_shift_and_window_size: never read before it is set.
        if x.shape[-1] <= self.window_size:
            self.shift_size = 0
        self.count = self.count + 1
        self.rows = x.shape[0] * 2
        self.cached = self.proj(x)
        self.info = Info(x.shape[0])
        return self.cached + self.shift_size + self.count

# The graph reads the new values (+ 0, + 1); the attributes' values are
# replayed in the order first assigned: a constant, a symbolic int, a graph
# output, an object the program made.
# ATTRS:      return %{{[0-9]+}}
# ATTRS-NEXT: after set L['self'].shift_size = 0
# ATTRS-NEXT: after set L['self'].count = 1
# ATTRS-NEXT: after set L['self'].rows = 2*n
# ATTRS-NEXT: after set L['self'].cached = %{{[0-9]+}}
# ATTRS-NEXT: after set L['self'].info = object "side-effects":Info{rows = n}
# ATTRS-NEXT: }
# The count was read before it was set: pinned at its entry value. The
# shift size was not read: not guarded.
# ATTRS-GUARDS:      equals L['self'].window_size : 7
# ATTRS-GUARDS-NEXT: equals L['self'].count : 0
# ATTRS-GUARDS-NOT:  shift_size


def containers(x, xs, d):
    xs.append(x * 2)
    xs.append(len(xs))
    del xs[0]
    d["y"] = d["y"] + 1
    d.update(z=x.sum())
    return xs[0] + d["y"]

# CONTAINERS:      return
# CONTAINERS-NEXT: after fill L['xs'] = [%{{[0-9]+}}, 2]
# CONTAINERS-NEXT: after fill L['d'] = {"y": 2, "z": %{{[0-9]+}}}
# CONTAINERS-NEXT: }
# The guards are about the containers at entry: one item, keys y only.
# CONTAINERS-GUARDS-DAG: keys L['d'] : ["y"]
# CONTAINERS-GUARDS-DAG: equals L['d']['y'] : 1
# CONTAINERS-GUARDS-DAG: length L['xs'] : 1


def containers_inputs():
    return (torch.ones(2), [torch.zeros(2)], {"y": 1})


def globals_(x):
    global calls, last
    calls = calls + 1
    last = x * calls
    return last + calls

# GLOBALS:      return
# GLOBALS-NEXT: after set G['calls'] = 1
# GLOBALS-NEXT: after set G['last'] = %{{[0-9]+}}
# GLOBALS-GUARDS:     equals G['calls'] : 0
# GLOBALS-GUARDS-NOT: G['last']


class State:
    def __init__(self):
        self.scale = None
        self.enabled = False


state = State()


def restores(x):
    old = state.enabled
    state.enabled = True
    state.scale = 2.0
    y = x * state.scale if state.enabled else x
    state.enabled = old
    state.scale = None
    return y

# A flag read and assigned back needs nothing replayed (its entry value is
# guarded); the scale, set and cleared without a read, is set to None.
# RESTORES:      return
# RESTORES-NEXT: after set G['state'].scale = none
# RESTORES-NEXT: }
# RESTORES-GUARDS:     equals G['state'].enabled : false
# RESTORES-GUARDS-NOT: G['state'].scale


def example_inputs():
    return (torch.ones(2, 4),)


def speculated(x):
    # The side of the data-dependent branch that only raises is run and
    # taken back: its assignment is not replayed.
    if x.sum() > 100:
        state.scale = 5.0
        raise ValueError("too large")
    state.enabled = True
    return x + 1

# SPECULATED:      return
# SPECULATED-NEXT: after set G['state'].enabled = true
# SPECULATED-NEXT: }
