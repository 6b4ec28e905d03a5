# Dicts keyed by constants other than str, held by the model, a global, a
# class attribute or a closure cell: their keys are guarded with their types
# and in order (`keys ... : [0, 1]`), and each entry capture reads is read
# through its key (`L['self'].scales[0]`, `[True]`, `[(1, 'a')]`), a
# constant guarded by value, a tensor a graph input the rewritten code
# reads again. A key that is not such a constant keeps the dict's length
# pinned only (exact dicts) or stops capture (dict objects). A dict the
# bytecode reads by key only (an attribute, a global) has its type and the
# entries read guarded, not its keys (UnreadDicts.cpp).
# RUN: %dync export %s:Model.forward --emit=guards | FileCheck %s
# RUN: %dync export %s:Model.forward --emit=guards | FileCheck %s --check-prefix=NOKEYS
# RUN: %dync export %s:Model.forward --emit=graph | FileCheck %s --check-prefix=GRAPH
# RUN: %dync export %s:held --emit=guards | FileCheck %s --check-prefix=HELD
# RUN: not %dync export %s:odd_keys --emit=guards 2>&1 | FileCheck %s --check-prefix=ODDKEYS
import collections

import torch
from torch import nn

STEPS = {-1: 0.5, 2: 4.0}


def make_offset():
    offsets = {None: 1.0, 2.5: 2.0}

    def offset(x):
        return x + offsets[None] * offsets[2.5]

    return offset


OFFSET = make_offset()


class Model(nn.Module):
    table = {(1, "a"): 3.0, (2,): 7.0}

    def __init__(self):
        super().__init__()
        self.scales = {0: 2.0, 1: 3.0}
        self.flags = {True: 1.5, False: -1.0}
        self.weights = {0: torch.ones(3)}

    def forward(self, x):
        y = x * self.scales[0] + self.scales[1]
        y = y * self.flags[True] + self.weights[0]
        y = y * self.table[(1, "a")] + STEPS[-1]
        return OFFSET(y)


ORDERED = collections.OrderedDict([(3, 1.0), (1, 2.0)])


def held(x):
    for key in ORDERED:
        x = x * ORDERED[key] + key
    return x


ODD = collections.OrderedDict([(torch.float32, 2.0)])


def odd_keys(x):
    return x * ODD[torch.float32]


def example_inputs():
    return (torch.randn(3),)


# CHECK-DAG: tensor L['self'].weights[0] : tensor<f32, [3]>
# CHECK-DAG: type L['self'].scales : builtins:dict
# CHECK-DAG: equals L['self'].scales[0] : 2.0
# CHECK-DAG: equals L['self'].scales[1] : 3.0
# CHECK-DAG: type L['self'].flags : builtins:dict
# CHECK-DAG: equals L['self'].flags[True] : 1.5
# CHECK-DAG: type L['self'].weights : builtins:dict
# CHECK-DAG: keys type(L['self']).table : [(1, "a"), (2,)]
# CHECK-DAG: equals type(L['self']).table[(1, 'a')] : 3.0
# CHECK-DAG: equals type(L['self']).table[(2,)] : 7.0
# CHECK-DAG: type G['STEPS'] : builtins:dict
# CHECK-DAG: equals G['STEPS'][-1] : 0.5
# CHECK-DAG: keys G['OFFSET'].__closure__[0].cell_contents : [none, 2.5]
# CHECK-DAG: equals G['OFFSET'].__closure__[0].cell_contents[None] : 1.0
# CHECK-DAG: equals G['OFFSET'].__closure__[0].cell_contents[2.5] : 2.0

# NOKEYS-NOT: keys L['self']
# NOKEYS-NOT: flags[False]
# NOKEYS-NOT: keys G['STEPS']
# NOKEYS:     }

# GRAPH: %self_weights_0: tensor<f32, [3]> = L['self'].weights[0]

# HELD-DAG: type G['ORDERED'] : collections:OrderedDict
# HELD-DAG: keys G['ORDERED'] : [3, 1]
# HELD-DAG: equals G['ORDERED'][3] : 1.0
# HELD-DAG: equals G['ORDERED'][1] : 2.0

# ODDKEYS: error: G['ODD'] (a collections.OrderedDict) has the key torch.float32, which is not an int, str, bool, finite float, None or a tuple of those; the items of a dict object the program holds are guarded by such keys only, so this is not supported yet
