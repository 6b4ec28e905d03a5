# Dict keys that are objects whose class writes __hash__ and __eq__ (a
# uuid.UUID, the program's own class): a lookup finds an equal key as
# CPython's dict does, by equal hashes and then __eq__, whether the key is a
# real object (read from a global) or one made while capturing (its class's
# methods inlined); an equal key stored again replaces the entry. Objects
# whose class hashes by identity are the same key only as themselves.
# Returning a dict with such a key is refused in plain words.
# RUN: %dync export %s:found %s:made %s:replaced %s:tagged %s:identity --emit=graph | FileCheck %s
# RUN: not %dync export %s:returned --emit=graph 2>&1 | FileCheck %s --check-prefix=RETURNED
import uuid

import torch

KEY = uuid.UUID("12345678-1234-5678-1234-567812345678")
SAME = uuid.UUID("12345678-1234-5678-1234-567812345678")
TABLE = {KEY: 2.0, uuid.UUID(int=7): 3.0}


class Tag:
    def __init__(self, name):
        self.name = name

    def __hash__(self):
        return hash(self.name)

    def __eq__(self, other):
        return isinstance(other, Tag) and other.name == self.name


class Plain:
    pass


TAGS = {Tag("a"): 4.0, Tag("b"): 5.0}


def found(x):
    return x * TABLE[SAME] + TABLE[uuid.UUID(int=7)]

# CHECK-LABEL: graph @found(
# CHECK:         aten::mul.Tensor(%x, 2.0)
# CHECK:         aten::add.Tensor({{.*}}, 3.0)


def made(x):
    d = {KEY: 1.5}
    return x * d[SAME], SAME in d, uuid.UUID(int=8) in d

# CHECK-LABEL: graph @made(
# CHECK:         aten::mul.Tensor(%x, 1.5)
# CHECK:         return (%{{[0-9]+}}, true, false)


def replaced(x):
    d = {}
    d[KEY] = x
    d[SAME] = x + 1
    return len(d), d[KEY]

# CHECK-LABEL: graph @replaced(
# CHECK:         %[[ADD:[0-9]+]] = aten::add.Tensor(%x, 1)
# CHECK:         return (1, %[[ADD]])


def tagged(x):
    d = {Tag("z"): x}
    return d[Tag("z")] * TAGS[Tag("b")], Tag("c") in TAGS

# CHECK-LABEL: graph @tagged(
# CHECK:         aten::mul.Tensor(%x, 5.0)
# CHECK:         return (%{{[0-9]+}}, false)


def identity(x):
    p = Plain()
    d = {p: 2.0}
    return x * d[p], Plain() in d

# CHECK-LABEL: graph @identity(
# CHECK:         aten::mul.Tensor(%x, 2.0)
# CHECK:         return (%{{[0-9]+}}, false)


def returned(x):
    return {KEY: x}

# RETURNED: error: returned: the function returns a dict with the key UUID('12345678-1234-5678-1234-567812345678'); returned dicts may have str, int, bool, float and None keys


def example_inputs():
    return (torch.randn(3),)
