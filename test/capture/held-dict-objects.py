# Real objects of dict subclasses the program holds (an OrderedDict, a
# defaultdict, a class deriving from dict) and list subclasses, read through a
# source: their items are read one by one through their own sources, with the
# type and the keys (an OrderedDict's in its own order) guarded, a constant
# item by value and a tensor item as a graph input, so a change after export
# misses or is read again, and what the object's class gives for each name
# capture looks up on it (a method of its own, its builtin base's, none) is
# pinned through `type(SRC).name`. A defaultdict's factory is pinned; a class whose
# item reads are its own cannot have a tensor read as a graph input, and a
# list subclass reading its items with methods of its own is refused. An
# object the program reads by key and attribute only has its keys left
# unguarded (UnreadDicts.cpp); iterating one pins them.
# RUN: %dync export %s:Model.forward --emit=guards | FileCheck %s
# RUN: %dync export %s:Model.forward --emit=guards | FileCheck %s --check-prefix=NOKEYS
# RUN: %dync export %s:Model.forward --emit=graph | FileCheck %s --check-prefix=GRAPH
# RUN: %dync export %s:scaled_global --emit=guards | FileCheck %s --check-prefix=OWN
# RUN: %dync export %s:missing_key --emit=guards | FileCheck %s --check-prefix=MISSING
# RUN: %dync export %s:missing_key --emit=graph | FileCheck %s --check-prefix=MISSINGGRAPH
# RUN: not %dync export %s:own_tensor --emit=guards 2>&1 | FileCheck %s --check-prefix=OWNTENSOR
# RUN: not %dync export %s:own_list --emit=guards 2>&1 | FileCheck %s --check-prefix=OWNLIST
# RUN: not %dync export %s:odd_factory --emit=guards 2>&1 | FileCheck %s --check-prefix=FACTORY
import collections
import functools

import torch
from torch import nn


class Table(dict):
    pass


class Scaled(dict):
    def __getitem__(self, key):
        return dict.__getitem__(self, key) * 2

    def __missing__(self, key):
        return 0.25


class Items(list):
    def __getitem__(self, index):
        return list.__getitem__(self, index) + 1


class Tagged(list):
    def __repr__(self):
        return "Tagged" + list.__repr__(self)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.order = collections.OrderedDict(b=2.0, a=torch.ones(3))
        self.counts = collections.defaultdict(int, k=3)
        self.table = Table(scale=0.5)
        self.table.note = "kept"
        self.tagged = Tagged([1.5, 2.5])

    def forward(self, x):
        y = x * self.order["b"] + self.order["a"]
        for key in self.order:
            y = y + len(key)
        y = y * self.counts["k"] + self.counts.get("j", 7)
        if self.table.note == "kept":
            y = y * self.table["scale"]
        return y + self.tagged[1]


SCALED = Scaled(factor=3.0)


def scaled_global(x):
    return x * SCALED["factor"] + SCALED["absent"]


CACHE = collections.defaultdict(list)


def missing_key(x):
    CACHE["seen"].append(1)
    return x * len(CACHE["seen"])


OWN = Scaled(w=torch.ones(2))


def own_tensor(x):
    return x + OWN["w"]


ITEMS = Items([1, 2])


def own_list(x):
    return x * ITEMS[0]


ODD = collections.defaultdict(lambda: 1)
ODD.default_factory = functools.partial(int, 5)


def odd_factory(x):
    return x * ODD["z"]


def example_inputs():
    return (torch.randn(3),)


# CHECK-DAG: type L['self'].order : collections:OrderedDict
# CHECK-DAG: keys L['self'].order : ["b", "a"]
# CHECK-DAG: equals L['self'].order['b'] : 2.0
# CHECK-DAG: tensor L['self'].order['a'] : tensor<f32, [3]>
# CHECK-DAG: type L['self'].counts : collections:defaultdict
# CHECK-DAG: keys L['self'].counts : ["k"]
# CHECK-DAG: equals L['self'].counts['k'] : 3
# CHECK-DAG: same L['self'].counts.default_factory : M['builtins'].int
# CHECK-DAG: type L['self'].table : "held-dict-objects":Table
# CHECK-DAG: equals L['self'].table['scale'] : 0.5
# CHECK-DAG: equals L['self'].table.note : "kept"
# CHECK-DAG: absent type(L['self'].table).note
# CHECK-DAG: same type(L['self'].table).__getitem__ : M['builtins'].dict.__getitem__
# CHECK-DAG: length L['self'].tagged : 2
# CHECK-DAG: equals L['self'].tagged[1] : 2.5

# NOKEYS-NOT: keys L['self'].table
# NOKEYS:     }

# GRAPH: %self_order_a: tensor<f32, [3]> = L['self'].order['a']

# OWN-DAG: type G['SCALED'] : "held-dict-objects":Scaled
# OWN-DAG: keys G['SCALED'] : ["factor"]
# OWN-DAG: equals G['SCALED']['factor'] : 3.0
# OWN-DAG: function type(G['SCALED']).__getitem__ : "held-dict-objects":Scaled.__getitem__ line 34
# OWN-DAG: function type(G['SCALED']).__missing__ : "held-dict-objects":Scaled.__missing__ line 37

# MISSING-DAG: keys G['CACHE'] : []
# MISSING-DAG: same G['CACHE'].default_factory : M['builtins'].list
# MISSINGGRAPH: after fill G['CACHE'] = {"seen": [1]}

# OWNTENSOR: error: G['OWN'] (a held-dict-objects.Scaled) holds a tensor at G['OWN']['w'] and its class has a __getitem__ of its own, which reading the tensor as a graph input would run; not supported yet

# OWNLIST: error: G['ITEMS'] is a held-dict-objects.Items whose class reads or stores its items with methods of its own (__getitem__, __len__, __iter__ or __setitem__); guards cannot read its items as the program does, so this is not supported yet

# FACTORY: error: G['ODD'] (a collections.defaultdict) has a default_factory ({{.*}}) that guards cannot pin (not None, a function or a class its module names); not supported yet
