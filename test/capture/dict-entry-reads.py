# A dict in the program's state is guarded on the entries the program
# reads, not whole: its type, and each entry read by a constant key
# (`d['k']`) or, for an object of a dict class, each instance attribute read
# by name (`config.k`, diffusers' FrozenDict config behind a property). An
# entry never read (a list in the order of a set of strings) is not
# guarded. Iterating the dict, its len() or passing it on reads it whole:
# keys and every entry pinned. Entries only assigned are replayed after the
# graph as an update, the dict's other entries left unread.
# RUN: %dync export %s:plain_entries --emit=guards | FileCheck %s --check-prefix=PLAIN
# RUN: %dync export %s:config_entries --emit=guards | FileCheck %s --check-prefix=CONFIG
# RUN: %dync export %s:iterated --emit=guards | FileCheck %s --check-prefix=WHOLE
# RUN: %dync export %s:config_passed_on --emit=guards | FileCheck %s --check-prefix=PASSED
# RUN: %dync export %s:missing_key --emit=guards | FileCheck %s --check-prefix=MISSING
# RUN: %dync export %s:assigned --emit=graph | FileCheck %s --check-prefix=ASSIGNED-GRAPH
# RUN: %dync export %s:assigned --emit=guards | FileCheck %s --check-prefix=ASSIGNED
# RUN: %dync export %s:assigned_then_read --emit=graph | FileCheck %s --check-prefix=READBACK
# RUN: %dync export %s:assigned_then_counted --emit=graph | FileCheck %s --check-prefix=COUNTED
from collections import OrderedDict

import torch


class FrozenConfig(OrderedDict):
    """diffusers' FrozenDict: each key is an instance attribute too."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        for key, value in self.items():
            setattr(self, key, value)


class Holder:
    def __init__(self):
        self._internal_dict = FrozenConfig(scale=2.0, shift=1.0,
                                           unordered=list({"b", "a", "c"}))

    @property
    def config(self):
        return self._internal_dict


holder = Holder()
TABLE = {"a": 2.0, "b": [3, 1], "unused": "never read"}
LOG = {"old": 1}


def plain_entries(x):
    return x * TABLE["a"] + TABLE["b"][0]

# PLAIN:      type G['TABLE'] : builtins:dict
# PLAIN-NEXT: equals G['TABLE']['a'] : 2.0
# PLAIN-NOT:  keys G['TABLE']
# PLAIN-NOT:  unused
# PLAIN:      }


def config_entries(x):
    return x * holder.config.scale + holder.config["shift"]

# CONFIG:     type G['holder']._internal_dict : {{.*}}FrozenConfig
# CONFIG:     equals G['holder']._internal_dict.scale : 2.0
# CONFIG:     equals G['holder']._internal_dict['shift'] : 1.0
# CONFIG-NOT: keys G['holder']._internal_dict
# CONFIG-NOT: unordered
# CONFIG:     }


def iterated(x):
    for key in TABLE:
        x = x + len(key)
    return x

# WHOLE: keys G['TABLE'] : ["a", "b", "unused"]
# WHOLE: equals G['TABLE']['unused'] : "never read"


def config_passed_on(x):
    return x * len(holder.config)

# PASSED: keys G['holder']._internal_dict : ["scale", "shift", "unordered"]
# PASSED: G['holder']._internal_dict.unordered


def missing_key(x):
    # An absent key raises KeyError, which depends on the keys.
    try:
        return x * TABLE["missing"]
    except KeyError:
        return x

# MISSING: keys G['TABLE'] : ["a", "b", "unused"]


def assigned(x):
    y = x * 2
    LOG["y"] = y
    LOG["old"] = 2
    return y

# ASSIGNED-GRAPH:  after update G['LOG'] = {"y": %{{[0-9]+}}, "old": 2}
# ASSIGNED:        type G['LOG'] : builtins:dict
# ASSIGNED-NOT:    keys G['LOG']
# ASSIGNED-NOT:    G['LOG']['old']
# ASSIGNED:        }


def assigned_then_read(x):
    LOG["scale"] = 3.0
    return x * LOG["scale"]

# READBACK: aten::mul.Tensor(%x, 3.0)
# READBACK: after update G['LOG'] = {"scale": 3.0}


def assigned_then_counted(x):
    LOG["y"] = x
    return x * len(LOG)

# COUNTED: aten::mul.Tensor(%x, 2)
# COUNTED: after fill G['LOG'] = {"old": 1, "y": %x}


def example_inputs():
    return (torch.randn(3),)
