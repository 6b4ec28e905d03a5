# Methods of builtin types run through CPython's own method objects: dict and
# list methods over containers of tensors change the container capture holds
# (the tensors keep their identity), str, int and float methods of constants
# give constants, sort with a key written in Python runs the key inlined, and
# a method the table refuses stops capture naming it.
# RUN: %dync export %s:dict_methods %s:list_methods %s:constant_methods \
# RUN:   %s:sort_with_key --emit=graph | FileCheck %s
# RUN: not %dync export %s:set_pop --emit=graph 2>&1 | FileCheck %s --check-prefix=REFUSED
# RUN: not %dync export %s:tensor_order --emit=graph 2>&1 | FileCheck %s --check-prefix=ORDER
# RUN: %dync export %s:input_mutation --emit=graph 2>&1 | FileCheck %s --check-prefix=INPUT
import torch


def dict_methods(x, d):
    out = {"a": x, "b": x * 2}
    first = out.pop("a")
    missing = out.pop("zz", None)
    out.setdefault("c", x + 1)
    out.update({"e": x - 1}, f=d["w"])
    last = out.popitem()
    keys = list(out)
    spread = dict.fromkeys(("p", "q"), x)
    return first + out["b"] + out["c"] + last[1] + spread["q"] + d.get("w"), keys, missing

# CHECK-LABEL: graph @dict_methods(
# CHECK-DAG:   %[[B:[0-9]+]] = aten::mul.Tensor(%x, 2)
# CHECK-DAG:   %[[C:[0-9]+]] = aten::add.Tensor(%x, 1)
# CHECK:       aten::add.Tensor(%x, %[[B]])
# CHECK:       return ({{.*}}, ["b", "c", "e"], none)


def list_methods(x, d):
    xs = [x, x + 1]
    xs.insert(0, x * 3)
    xs.extend([x - 1])
    xs.reverse()
    popped = xs.pop(1)
    xs.remove(xs[0])
    position = xs.index(x)
    return torch.cat(xs), popped, position

# CHECK-LABEL: graph @list_methods(
# CHECK-DAG:   %[[ONE:[0-9]+]] = aten::add.Tensor(%x, 1)
# CHECK-DAG:   %[[THREE:[0-9]+]] = aten::mul.Tensor(%x, 3)
# CHECK:       aten::cat.default([%x, %[[THREE]]])
# CHECK:       return ({{.*}}, %[[ONE]], 0)


def constant_methods(x, d):
    words = "Hello, World".lower().split(", ")
    name = "{}_{}".format(*words).upper()
    bits = (1000).bit_length() + (2.5).as_integer_ratio()[1] + (7).real
    table = str.maketrans("LO", "10")
    return x * bits, name.translate(table), frozenset((1, 2)).union({3}) == {1, 2, 3}

# CHECK-LABEL: graph @constant_methods(
# CHECK:       aten::mul.Tensor(%x, 19)
# CHECK:       return ({{.*}}, "HE110_W0R1D", true)


def sort_with_key(x, d):
    pairs = [("b", x * 2), ("a", x), ("c", x + 5)]
    pairs.sort(key=lambda p: p[0], reverse=True)
    return torch.stack([p[1] for p in pairs]), sorted(["bb", "a", "ccc"], key=len)

# CHECK-LABEL: graph @sort_with_key(
# CHECK-DAG:   %[[C:[0-9]+]] = aten::add.Tensor(%x, 5)
# CHECK-DAG:   %[[B:[0-9]+]] = aten::mul.Tensor(%x, 2)
# CHECK:       aten::cat.default([%[[C]], %[[B]], %x])
# CHECK:       return ({{.*}}, ["a", "bb", "ccc"])


def set_pop(x, d):
    return x * {1, 2}.pop()

# REFUSED: builtin-methods.py:[[@LINE-2]]:16: error: method 'pop' of set is not supported: it removes an arbitrary item


def tensor_order(x, d):
    return sorted([x, x + 1])

# ORDER: builtin-methods.py:[[@LINE-2]]:12: error: data-dependent branch: the condition depends on a tensor's values


def input_mutation(x, d):
    d.pop("w")
    return x

# A dict of the caller's is changed after the graph (docs/capture.md, "Side
# effects").
# INPUT: return
# INPUT-NEXT: after fill L['d'] = {}


def example_inputs():
    return (torch.randn(3), {"w": torch.randn(3)})
