# A function may return dicts (keys in insertion order: str, int, bool,
# float, None, and tuples of them) and objects of classes written in Python
# made while capturing (dataclasses, frozen ones too, plain classes): the graph returns them with
# their structure, and --emit=signature names each entry. A dict of another
# key kind, or of a class defined inside a function, is refused by name.
# RUN: %dync export %s:dicts %s:dataclass %s:plain --dynamic 'x:0=n[2,64]' --emit=graph \
# RUN:   | FileCheck %s
# RUN: %dync export %s:dataclass --emit=signature | FileCheck %s --check-prefix=SIG
# RUN: not %dync export %s:tuple_key --emit=graph 2>&1 | FileCheck %s --check-prefix=KEY
# RUN: not %dync export %s:local_class --emit=bytecode 2>&1 | FileCheck %s --check-prefix=LOCAL
# RUN: %dync export %s:ordered --emit=graph | FileCheck %s --check-prefix=ORDERED
# RUN: %dync export %s:move_to_end --emit=graph | FileCheck %s --check-prefix=MOVE
import collections
import dataclasses

import torch


def example_inputs():
    return (torch.randn(4, 3),)


def dicts(x):
    out = {"b": x + 1}
    out["a"] = [x.shape[0], None]
    out[0] = 1.5
    return out


# CHECK-LABEL: graph @dicts(
# CHECK:         return {"b": %0, "a": [n, none], 0: 1.5}


@dataclasses.dataclass(frozen=True)
class Out:
    logits: torch.Tensor
    loss: object = None


def dataclass(x):
    return Out(x * 2), Out(x, loss=x.sum())


# CHECK-LABEL: graph @dataclass(
# CHECK:         return (object "structured-results":Out{logits = %0, loss = none}, object "structured-results":Out{logits = %x, loss = %1})

# SIG:      result: tuple
# SIG-NEXT: result 0: object structured-results:Out
# SIG-NEXT: result 0.logits: tensor<f32, [4, 3]>
# SIG-NEXT: result 0.loss: none
# SIG-NEXT: result 1: object structured-results:Out
# SIG-NEXT: result 1.logits: tensor<f32, [4, 3]>
# SIG-NEXT: result 1.loss: tensor<f32, []>


class Plain:
    def __init__(self, x):
        self.scaled = x * 3
        self.rows = x.shape[0]


def plain(x):
    return {"plain": Plain(x)}


# CHECK-LABEL: graph @plain(
# CHECK:         return {"plain": object "structured-results":Plain{scaled = %0, rows = n}}


def tuple_key(x):
    return {(1, 2): x, ("disp", (0, None)): x, (1, x.dtype): x}


# KEY: structured-results.py: error: tuple_key: the function returns a dict with the key (1, torch.float32); returned dicts may have str, int, bool, float and None keys, and tuples of them


def local_class(x):
    class Local:
        def __init__(self, v):
            self.v = v

    return Local(x)


# LOCAL: error: {{.*}}structured-results.py: local_class: cannot rewrite local_class: the function returns a structured-results:local_class.<locals>.Local, whose type the rewritten code cannot import by its module and qualified name


# A collections.OrderedDict made while capturing keeps its class; the methods
# it shares with dict are modelled, its own are not yet.
def ordered(x):
    out = collections.OrderedDict(b=x)
    out["a"] = x + 1
    return out


# ORDERED: return collections:OrderedDict{"b": %x, "a": %0}


def move_to_end(x):
    out = collections.OrderedDict(b=x, a=x)
    out.move_to_end("b")
    return out


# The returned OrderedDict keeps the order move_to_end gave it.
# MOVE: return collections:OrderedDict{"a": %x, "b": %x}
