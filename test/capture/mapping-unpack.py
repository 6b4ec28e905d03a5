# `**m` in a call and `{**m}` read a mapping made while capturing as
# CPython's dict merge reads it: a dict subclass that keeps dict's own
# iteration gives its items as stored (its __getitem__ is not called); an
# OrderedDict subclass (transformers' ModelOutput, passed on as
# `Output(**outputs, logits=...)`) is read through its keys() and
# __getitem__, which the class may override. A repeated keyword is
# refused as CPython raises it.
# RUN: %dync export %s:stored %s:through_getitem %s:through_keys %s:passed_on --emit=graph | FileCheck %s
# RUN: not %dync export %s:repeated --emit=graph 2>&1 | FileCheck %s --check-prefix=REPEATED
import collections

import torch


def example_inputs():
    return (torch.randn(4, 3),)


class Doubling(dict):
    def __getitem__(self, key):
        return super().__getitem__(key) * 2


class OrderedDoubling(collections.OrderedDict):
    def __getitem__(self, key):
        return super().__getitem__(key) * 2


class OnlyB(collections.OrderedDict):
    def keys(self):
        return ["b"]


def take(**kwargs):
    return kwargs


def stored(x):
    return {**Doubling(a=x + 1)}, take(**Doubling(a=x - 1))

# CHECK-LABEL: graph @stored(
# CHECK:         %0 = aten::add.Tensor(%x, 1)
# CHECK-NEXT:    %1 = aten::sub.Tensor(%x, 1)
# CHECK-NEXT:    return ({"a": %0}, {"a": %1})


def through_getitem(x):
    return {**OrderedDoubling(a=x + 1)}, take(**OrderedDoubling(a=x - 1))

# CHECK-LABEL: graph @through_getitem(
# CHECK:         %0 = aten::add.Tensor(%x, 1)
# CHECK-NEXT:    %1 = aten::mul.Tensor(%0, 2)
# CHECK-NEXT:    %2 = aten::sub.Tensor(%x, 1)
# CHECK-NEXT:    %3 = aten::mul.Tensor(%2, 2)
# CHECK-NEXT:    return ({"a": %1}, {"a": %3})


def through_keys(x):
    return {**OnlyB(a=x, b=x * 3)}

# CHECK-LABEL: graph @through_keys(
# CHECK:         %0 = aten::mul.Tensor(%x, 3)
# CHECK-NEXT:    return {"b": %0}


def passed_on(x):
    outputs = OrderedDoubling(hidden=x.sin())
    return take(**outputs, logits=x.cos())

# CHECK-LABEL: graph @passed_on(
# CHECK:         %0 = aten::sin.default(%x)
# CHECK-NEXT:    %1 = aten::mul.Tensor(%0, 2)
# CHECK-NEXT:    %2 = aten::cos.default(%x)
# CHECK-NEXT:    return {"hidden": %1, "logits": %2}


def repeated(x):
    return take(**OrderedDoubling(a=x), a=x)

# REPEATED: mapping-unpack.py:[[#@LINE-2]]:{{[0-9]+}}: error: got multiple values for keyword argument 'a'
