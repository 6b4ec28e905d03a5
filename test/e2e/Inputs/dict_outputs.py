"""Classes deriving from dict and OrderedDict, returned and used.

`OutputBase` has the shape of transformers' ModelOutput: a dataclass base
deriving from OrderedDict whose __post_init__ copies the fields that are not
None into the items, whose __setitem__ and __setattr__ keep items and
attributes in step through super(), and whose __getitem__ takes str keys or
int and slice positions (through to_tuple). `Bag` is a plain dict subclass
that calls dict's methods unbound and stores through its __dict__.
"""
import collections
import dataclasses
from typing import Optional

import torch


class OutputBase(collections.OrderedDict):
    def __post_init__(self):
        class_fields = dataclasses.fields(self)
        first = getattr(self, class_fields[0].name)
        others_none = all(self.__dict__.get(f.name) is None for f in class_fields[1:])
        if others_none and not isinstance(first, torch.Tensor):
            raise ValueError("the first field must be a tensor")
        for field in class_fields:
            value = self.__dict__.get(field.name)
            if value is not None:
                self[field.name] = value

    def __getitem__(self, k):
        if isinstance(k, str):
            return dict(self.items())[k]
        return self.to_tuple()[k]

    def __setattr__(self, name, value):
        field_names = {field.name for field in dataclasses.fields(self)}
        if name in field_names and value is not None:
            super().__setitem__(name, value)
        super().__setattr__(name, value)

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        super().__setattr__(key, value)

    def to_tuple(self):
        return tuple(self[k] for k in self.keys())


@dataclasses.dataclass
class Output(OutputBase):
    logits: torch.Tensor = None
    hidden: Optional[tuple] = None
    loss: Optional[torch.Tensor] = None


class Bag(dict):
    def __init__(self, scale, **items):
        super().__init__(**items)
        self.scale = scale
        self.__dict__["count"] = len(self)

    def put(self, key, value):
        dict.__setitem__(self, key, value * self.scale)


def example_inputs():
    return (torch.randn(2, 3),)


def output_result(x):
    # Items: the fields that are not None; attributes: every field.
    return Output(logits=x * 2, loss=x.sum())


def output_after_set(x):
    out = Output(x + 1)
    out.hidden = (x, x - 1)  # through __setattr__: an item and an attribute
    out["loss"] = x.mean()  # through __setitem__
    return out


def output_reads(x):
    out = Output(logits=x * 3, hidden=(x,), loss=x.max())
    keys = list(out.keys())
    first, rest = out[0], out[1:]
    count = len(out) + ("loss" in out) + ("missing" in out)
    total = sum(v.sum() for v in out.values() if isinstance(v, torch.Tensor))
    values = [out[k] for k in out]
    return first + out["loss"] + total + count, rest, keys, values[2], out.to_tuple()[1], \
        bool(out), out.get("nothing", 7)


def bag_result(x):
    bag = Bag(2, a=x)
    bag.put("b", x + 1)
    bag["c"] = bag["a"] * bag.scale
    del bag["a"]
    bag.label = "done"
    return bag, len(bag), "b" in bag, sorted(bag.keys())


def nested_result(x):
    return {"out": Output(x.relu()), "rest": [Output(logits=x, hidden=(x * 2,))]}


class Registry(collections.OrderedDict):
    """An OrderedDict subclass whose __setitem__ is Python: OrderedDict's
    __init__, update and copy store each item through it (copy into an
    object made by calling the class with no arguments)."""

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        self.last = key


def ordered_methods(x):
    od = collections.OrderedDict(a=x, b=x * 2, c=x * 3)
    od.move_to_end("a")
    od.move_to_end("c", last=False)
    first = od.popitem(last=False)
    last = od.popitem()
    copied = od.copy()
    copied["d"] = x - 1
    return od, copied, first, last, type(copied).__name__


def registry_methods(x):
    r = Registry()
    r["a"], r["b"], r["c"] = x, x + 1, x + 2
    r.move_to_end("a")
    r.move_to_end("c", False)
    copied = r.copy()
    key, value = r.popitem(last=False)
    # OrderedDict's __init__ and update store through __setitem__ too.
    made = Registry([("p", x)], q=x * 3)
    made.update({"s": x - 3}, t=x)
    return r, copied, key, value, len(copied), made


SCALES = {("a", 1): 2.0, ("b", 2): 3.0}


def tuple_keys(x):
    # Tuple keys built in the function find equal tuples a global dict
    # holds; a missing one raises KeyError, caught.
    name, index = "a", 1
    y = x * SCALES[(name, index)]
    try:
        y = y + SCALES[(name, index + 5)]
    except KeyError as error:
        y = y - len(error.args)
    made = {(name, type(x)): y}
    return made[("a", torch.Tensor)] + float(("b", 2) in SCALES), ("a", 9) in made
