# Objects of classes deriving from dict and OrderedDict (a ModelOutput-shaped
# dataclass, a dict subclass) are made while capturing with their items and
# their attributes; a returned one keeps both: `object T{attributes}{items}`.
# dict's methods reached through super() or unbound act on the items. A
# list subclass returned is refused naming its class.
# RUN: %dync export %s:output %s:bag --emit=graph | FileCheck %s
# RUN: %dync export %s:output --emit=signature | FileCheck %s --check-prefix=SIG
# RUN: not %dync export %s:list_subclass --emit=graph 2>&1 | FileCheck %s --check-prefix=LIST
# RUN: %dync export %s:ordered --emit=graph | FileCheck %s --check-prefix=ORDERED
# RUN: %dync export %s:reorder_global --emit=graph | FileCheck %s --check-prefix=GLOBAL
# RUN: %dync export %s:tuple_keys --emit=graph | FileCheck %s --check-prefix=TUPLE
import collections
import dataclasses
from typing import Optional

import torch


def example_inputs():
    return (torch.randn(4, 3),)


class OutputBase(collections.OrderedDict):
    def __post_init__(self):
        for field in dataclasses.fields(self):
            value = self.__dict__.get(field.name)
            if value is not None:
                self[field.name] = value

    def __setattr__(self, name, value):
        if name in {f.name for f in dataclasses.fields(self)} and value is not None:
            super().__setitem__(name, value)
        super().__setattr__(name, value)

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        super().__setattr__(key, value)


@dataclasses.dataclass
class Output(OutputBase):
    logits: torch.Tensor = None
    hidden: Optional[torch.Tensor] = None
    loss: Optional[torch.Tensor] = None


def output(x):
    out = Output(logits=x * 2, loss=x.sum())
    return out, len(out), list(out.keys()), "hidden" in out


# CHECK-LABEL: graph @output(
# CHECK:         return (object "dict-instances":Output{logits = %0, hidden = none, loss = %1}{"logits": %0, "loss": %1}, 2, ["logits", "loss"], false)

# SIG:      result 0: object dict-instances:Output
# SIG-NEXT: result 0.logits: tensor<f32, [4, 3]>
# SIG-NEXT: result 0.hidden: none
# SIG-NEXT: result 0.loss: tensor<f32, []>
# SIG-NEXT: result 0.["logits"]: tensor<f32, [4, 3]>
# SIG-NEXT: result 0.["loss"]: tensor<f32, []>


class Bag(dict):
    def __init__(self, **items):
        super().__init__(**items)
        self.count = len(self)

    def __missing__(self, key):
        return self.count + 1


def bag(x):
    out = Bag(a=x)
    dict.__setitem__(out, "b", x + 1)
    out.__dict__["seen"] = "b" in out
    return out, out["c"]


# CHECK-LABEL: graph @bag(
# CHECK:         return (object "dict-instances":Bag{count = 1, seen = true}{"a": %x, "b": %0}, 2)


class Items(list):
    pass


def list_subclass(x):
    return Items([x])


# A list subclass's object is made (test/capture/list-objects.py), but not
# returned.
# LIST: error: list_subclass: the function returns a dict-instances.Items (a list subclass), which a graph cannot return yet: return list(...) of it instead



# OrderedDict's own methods on an OrderedDict and on an object of a subclass:
# move_to_end (either end), popitem (either end) and copy, which keeps the
# class. Reordering one a global holds is a side effect and is refused.
class Ordered(collections.OrderedDict):
    pass


def ordered(x):
    od = collections.OrderedDict(a=x, b=x + 1, c=x + 2)
    od.move_to_end("a")
    od.move_to_end("c", last=False)
    first = od.popitem(last=False)
    sub = Ordered(p=x, q=x * 2)
    sub.move_to_end("p")
    copied = sub.copy()
    return od, first, od.popitem(), od.copy(), copied, sub.popitem(False)


# ORDERED-LABEL: graph @ordered(
# ORDERED:         return (collections:OrderedDict{"b": %0}, ("c", %1), ("a", %x), collections:OrderedDict{"b": %0}, object "dict-instances":Ordered{}{"q": %2, "p": %x}, ("q", %2))

TABLE = collections.OrderedDict(a=1, b=2)


def reorder_global(x):
    TABLE.move_to_end("a")
    return x


# An OrderedDict the program holds is read through its source: reordering
# it is refilled after the graph in the program's order.
# GLOBAL: after fill G['TABLE'] = collections:OrderedDict{"b": 2, "a": 1}


# Tuple keys built while capturing find equal tuples a dict holds (a real
# global's or one the program made); a missing one raises KeyError(key),
# which the program catches: x * 2.0 - 1, then + 1.
SCALES = {("a", 1): 2.0, ("b", 2): 3.0}


def tuple_keys(x):
    name, index = "a", 1
    y = x * SCALES[(name, index)]
    try:
        y = y + SCALES[(name, index + 5)]
    except KeyError as error:
        y = y - len(error.args)
    made = {}
    made[(name, type(x))] = y
    return made[("a", torch.Tensor)] + ((name, 2) in made) + ((name, type(x)) in made)


# TUPLE-LABEL: graph @tuple_keys(
# TUPLE-NEXT:    %[[A:[0-9]+]] = aten::mul.Tensor(%x, 2.0)
# TUPLE-NEXT:    %[[B:[0-9]+]] = aten::sub.Tensor(%[[A]], 1)
# TUPLE-NEXT:    %[[C:[0-9]+]] = aten::add.Tensor(%[[B]], false)
# TUPLE-NEXT:    aten::add.Tensor(%[[C]], true)
