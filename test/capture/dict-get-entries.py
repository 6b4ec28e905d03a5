# `d.get(k)`, `d.get(k, default)` and `k in d` by a constant key read one
# entry of a dict in the program's state, as `d[k]` does: a present entry is
# guarded as its value (`in` pins its type), an absent str key by a guard
# that the dict has none (`absent SRC['k']`), and the dict's other entries
# are not guarded. A key guards cannot spell alone (an int key absent) and a
# get passed to a function keep reading the dict whole.
# RUN: %dync export %s:present_get --emit=guards | FileCheck %s --check-prefix=PRESENT
# RUN: %dync export %s:absent_get --emit=guards | FileCheck %s --check-prefix=ABSENT
# RUN: %dync export %s:absent_get --emit=graph | FileCheck %s --check-prefix=ABSENT-GRAPH
# RUN: %dync export %s:membership --emit=guards | FileCheck %s --check-prefix=IN
# RUN: %dync export %s:int_key_absent --emit=guards | FileCheck %s --check-prefix=WHOLE
# RUN: %dync export %s:get_passed_on --emit=guards | FileCheck %s --check-prefix=PASSED
from collections import OrderedDict

import torch

CONFIG = {"scale": 2.0, "layers": [3, 1], "unused": "never read"}
ORDERED = OrderedDict(shift=1.5, other="left alone")
NUMBERED = {0: 1.0, 1: 2.0}


def present_get(x):
    return x * CONFIG.get("scale", 1.0) + ORDERED.get("shift")

# PRESENT:      type G['CONFIG'] : builtins:dict
# PRESENT-NEXT: equals G['CONFIG']['scale'] : 2.0
# PRESENT:      type G['ORDERED'] : collections:OrderedDict
# PRESENT-NEXT: equals G['ORDERED']['shift'] : 1.5
# PRESENT-NOT:  keys G[
# PRESENT-NOT:  unused
# PRESENT-NOT:  left alone
# PRESENT:      }


def absent_get(x):
    scale = CONFIG.get("dropout", 0.5)
    if CONFIG.get("missing") is None:
        scale = scale + 1
    return x * scale

# ABSENT:      type G['CONFIG'] : builtins:dict
# ABSENT-NEXT: absent G['CONFIG']['dropout']
# ABSENT-NEXT: absent G['CONFIG']['missing']
# ABSENT-NOT:  keys G['CONFIG']
# ABSENT-NOT:  G['CONFIG']['scale']
# ABSENT:      }

# ABSENT-GRAPH: aten::mul.Tensor(%x, 1.5)


def membership(x):
    if "layers" in CONFIG:
        x = x + 1
    if "dropout" not in CONFIG:
        x = x * 2
    return x

# IN:      type G['CONFIG'] : builtins:dict
# IN-NEXT: type G['CONFIG']['layers'] : builtins:list
# IN-NEXT: absent G['CONFIG']['dropout']
# IN-NOT:  keys G['CONFIG']
# IN-NOT:  length G['CONFIG']['layers']
# IN:      }


def int_key_absent(x):
    return x * NUMBERED.get(5, 3.0)

# WHOLE: keys G['NUMBERED'] : [0, 1]


def lookup(getter):
    return getter("scale")


def get_passed_on(x):
    return x * lookup(CONFIG.get)

# PASSED: keys G['CONFIG'] : ["scale", "layers", "unused"]


def example_inputs():
    return (torch.randn(3),)
