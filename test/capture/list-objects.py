# Objects of classes deriving from list are list values of their class:
# made while capturing (list's __init__, or a Python __init__ calling it
# through super()), or read through a source when the class reads its items
# as list does, each item then read as `[i]` with the length and the class
# pinned. Their methods bind to them; `type` and `isinstance` see the
# class; a class defining __call__ (which list lacks, as Hugging Face's
# LogitsProcessorList) is called through it, made in forward or held.
# Returning one, one with instance attributes, and a class that changes
# list's behaviour (a special method of its own) are refused.
# RUN: %dync export %s:Held.forward --emit=graph | FileCheck %s
# RUN: %dync export %s:Held.forward --emit=guards | FileCheck %s --check-prefix=GUARDS
# RUN: %dync export %s:Chained.forward --emit=graph | FileCheck %s --check-prefix=CALLED
# RUN: %dync export %s:Chained.forward --emit=guards | FileCheck %s --check-prefix=CALLGUARDS
# Each refused program is an entry of one export that goes on past each
# refusal, and each refusal is reported at its line, in entry order.
# RUN: not %dync export %s:returned %s:Named.forward %s:own_items \
# RUN:   --keep-going --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefixes=RETURNED,NAMED,OWNITEMS
import torch
from torch import nn


class Layers(list):
    def run(self, x):
        for layer in self:
            x = layer(x)
        return x


class Scaled(list):
    def __init__(self, factor, items):
        super().__init__(item * factor for item in items)


class Held(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 2)
        self.order = Layers([self.a, torch.relu])

    def forward(self, x):
        made = Layers([torch.tanh])
        made.append(torch.sigmoid)
        scaled = Scaled(3, [x])
        return self.order.run(made.run(x)) + scaled[0], type(made) is Layers, len(made)

# CHECK-LABEL: graph @Held.forward(
# CHECK:       %[[M:[0-9]+]] = aten::mul.Tensor(%x, 3)
# CHECK-NEXT:  %[[T:[0-9]+]] = aten::tanh.default(%x)
# CHECK-NEXT:  %[[S:[0-9]+]] = aten::sigmoid.default(%[[T]])
# CHECK:       aten::addmm.default(%self_order_0_bias, %[[S]],
# CHECK-NEXT:  %[[R:[0-9]+]] = aten::relu.default
# CHECK:       aten::add.Tensor(%[[R]], %[[M]])
# CHECK:       return (%{{[0-9]+}}, true, 2)

# GUARDS-DAG: type L['self'].order : "list-objects":Layers
# GUARDS-DAG: length L['self'].order : 2
# GUARDS-DAG: type L['self'].order[0] : torch.nn.modules.linear:Linear
# GUARDS-DAG: builtin L['self'].order[1] : torch:relu


class Chain(list):
    def __call__(self, x, scale=1.0):
        for fn in self:
            x = fn(x) * scale
        return x


class Chained(nn.Module):
    def __init__(self):
        super().__init__()
        self.held = Chain([torch.relu, torch.exp])

    def forward(self, x):
        made = Chain()
        made.append(torch.tanh)
        return self.held(made(x), scale=2.0)

# CALLED-LABEL: graph @Chained.forward(
# CALLED:       %[[T:[0-9]+]] = aten::tanh.default(%x)
# CALLED-NEXT:  %[[M:[0-9]+]] = aten::mul.Tensor(%[[T]], 1.0)
# CALLED-NEXT:  %[[R:[0-9]+]] = aten::relu.default(%[[M]])
# CALLED-NEXT:  %[[M2:[0-9]+]] = aten::mul.Tensor(%[[R]], 2.0)
# CALLED-NEXT:  %[[E:[0-9]+]] = aten::exp.default(%[[M2]])
# CALLED-NEXT:  %[[M3:[0-9]+]] = aten::mul.Tensor(%[[E]], 2.0)
# CALLED-NEXT:  return %[[M3]]

# CALLGUARDS-DAG: type L['self'].held : "list-objects":Chain
# CALLGUARDS-DAG: length L['self'].held : 2


def returned(x):
    return Layers([x])

# RETURNED: error: returned: the function returns a list-objects.Layers (a list subclass), which a graph cannot return yet: return list(...) of it instead


class Named(nn.Module):
    def __init__(self):
        super().__init__()
        self.order = Layers([torch.relu])
        self.order.name = "first"

    def forward(self, x):
        return self.order.run(x)

# NAMED: error: L['self'].order is a list-objects.Layers with instance attributes; objects of list subclasses are read as lists, which hold no attributes, so this is not supported yet


class OwnItems(list):
    def __getitem__(self, index):
        return 0


def own_items(x):
    return OwnItems([x])[0]

# OWNITEMS: list-objects.py:[[@LINE-2]]:12: error: constructing an object of class 'list-objects.OwnItems' is not supported: it derives from list and defines __getitem__, which capture does not run on a list


def example_inputs():
    return (torch.randn(3, 2),)
