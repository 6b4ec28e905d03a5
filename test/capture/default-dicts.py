# collections.defaultdict and classes deriving from it, made while
# capturing: the factory runs on a missing key (defaultdict's __missing__,
# or a subclass's own in Python) and its result is stored, `+=` on a missing
# key counts from the factory's value, `d.default_factory` is the factory,
# a defaultdict without one raises KeyError, and dict(d) copies the items.
# Returning a defaultdict itself is refused by name.
# RUN: %dync export %s:cache --emit=graph | FileCheck %s
# Each refused program is an entry of one export that goes on past each
# refusal, and each refusal is reported at its line, in entry order.
# RUN: not %dync export %s:returned %s:no_factory %s:bad_factory \
# RUN:   --keep-going --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefixes=RETURNED,NOFACTORY,BADFACTORY
import torch
from collections import defaultdict


class Groups(defaultdict):
    def total(self):
        return sum(sum(v) for v in self.values())


def cache(x):
    seen = defaultdict(list)
    for i in range(3):
        seen[i % 2].append(x * i)
    counts = defaultdict(int)
    counts["a"] += 1
    groups = Groups(list, first=[x])
    groups["second"].append(x + 1)
    return groups.total() + sum(seen[1]), dict(counts), len(seen[5]), seen.default_factory is list

# CHECK-LABEL: graph @cache(
# CHECK:       %[[ONE:[0-9]+]] = aten::mul.Tensor(%x, 1)
# CHECK:       %[[PLUS:[0-9]+]] = aten::add.Tensor(%x, 1)
# CHECK:       return (%{{[0-9]+}}, {"a": 1}, 0, true)


def returned(x):
    d = defaultdict(list)
    d["a"].append(x)
    return d

# RETURNED: error: returned: the function returns a collections.defaultdict (a defaultdict), which a graph cannot return yet: return dict(...) of it instead


def no_factory(x):
    return defaultdict()["key"] + x

# NOFACTORY: default-dicts.py:[[@LINE-2]]:12: error: KeyError: 'key'


def bad_factory(x):
    return defaultdict(3)

# BADFACTORY: default-dicts.py:[[@LINE-2]]:12: error: TypeError: first argument must be callable or None


def example_inputs():
    return (torch.randn(2),)
