# Reads of real state the program changed earlier in the same capture see
# the change: capture never changes the caller's objects while capturing, so
# every read asks its own records first. torch.func.functional_call swaps
# the tensors it is given into the module's `_parameters` and `_buffers`
# (`module._parameters[name] = tensor`), runs forward, and swaps the
# originals back: the graph uses the passed tensors, and the tables are
# refilled with the originals after it. Also: a parameter removed from the
# table and set as a plain attribute, `update` on a table, an object's
# `__dict__` (vars()) after its attribute is set, a module's attribute after
# one of its functions stored the global, and a module container read after
# its table changed (refused).
# RUN: %dync export %s:Swap.forward --example example_swap --emit=graph | FileCheck %s --check-prefix=SWAP
# RUN: %dync export %s:Nested.forward --example example_nested --emit=graph | FileCheck %s --check-prefix=NESTED
# RUN: %dync export %s:Removed.forward --example example_swap --emit=graph | FileCheck %s --check-prefix=REMOVED
# RUN: %dync export %s:Updated.forward --example example_swap --emit=graph | FileCheck %s --check-prefix=UPDATED
# RUN: %dync export %s:attribute_then_vars --emit=graph | FileCheck %s --check-prefix=VARS
# RUN: %dync export %s:global_then_module_attr --emit=graph | FileCheck %s --check-prefix=GLOBAL
# Each refused program is an entry of one export that goes on past each
# refusal, and each refusal is reported at its line, in entry order.
# RUN: not %dync export %s:Listed.forward %s:Gone.forward %s:counted \
# RUN:   --example Listed.forward=example_swap --example Gone.forward=example_swap \
# RUN:   --keep-going --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefixes=LISTED,GONE,CELL
import sys

import torch
from torch import nn
from torch.func import functional_call


class Swap(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)

    def forward(self, x, w):
        return functional_call(self.lin, {"weight": w, "bias": self.lin.bias}, (x,))


# SWAP: %w: tensor<f32, [3, 4]> = L['w']
# SWAP: aten::permute.default(%w, [1, 0])
# SWAP-NOT: permute.default(%self_lin_weight
# SWAP: after update L['self']._modules['lin']._parameters = {"weight": %self_lin_weight, "bias": %self_lin_bias}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 6)
        self.norm = nn.BatchNorm1d(6)

    def forward(self, x):
        return self.norm(self.fc1(x))


class Nested(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = Net()

    def forward(self, x, w, mean):
        return functional_call(self.net, {"fc1.weight": w, "norm.running_mean": mean}, (x,))


# NESTED: aten::permute.default(%w, [1, 0])
# NESTED: aten::_native_batch_norm_legit.default({{.*}}, %mean,
# NESTED: after update L['self']._modules['net']._modules['fc1']._parameters = {"weight": %self_net_fc1_weight}
# NESTED: after update L['self']._modules['net']._modules['norm']._buffers = {"running_mean": %self_net_norm_running_mean}


class Removed(Swap):
    def forward(self, x, w):
        del self.lin._parameters["weight"]
        self.lin.weight = w
        return self.lin(x)


# REMOVED: aten::permute.default(%w, [1, 0])
# REMOVED: after fill L['self']._modules['lin']._parameters = {"bias": %self_lin_bias}
# REMOVED: after set L['self']._modules['lin'].weight = %w


class Updated(Swap):
    def forward(self, x, w):
        self.lin._parameters.update(weight=w)
        return self.lin(x)


# UPDATED: aten::permute.default(%w, [1, 0])
# UPDATED: after fill L['self']._modules['lin']._parameters = {"weight": %w, "bias": %self_lin_bias}


class Listed(nn.Module):
    def __init__(self):
        super().__init__()
        self.weights = nn.ParameterList([nn.Parameter(torch.randn(3, 4))])

    def forward(self, x, w):
        self.weights._parameters["0"] = w
        return x @ self.weights[0].t()


# LISTED: error: indexing L['self']._modules['weights'] after the program changed its _parameters in this call is not supported yet


class Gone(Swap):
    def forward(self, x, w):
        del self.lin._parameters["weight"]
        return self.lin.weight


# GONE: error: AttributeError: 'torch.nn.modules.linear.Linear' object has no attribute 'weight'


class State:
    def __init__(self):
        self.scale = 2.0


state = State()
offset = 1.0
this_module = sys.modules[__name__]


def attribute_then_vars(x):
    state.scale = 7.0
    return x * vars(state)["scale"]


# VARS: aten::mul.Tensor(%x, 7.0)
# VARS: after set G['state'].scale = 7.0


def set_offset(value):
    global offset
    offset = value


def global_then_module_attr(x):
    set_offset(5.0)
    return x + this_module.offset


# GLOBAL: aten::add.Tensor(%x, 5.0)
# GLOBAL: after set G['offset'] = 5.0


def make_counter():
    calls = 0

    def bump():
        nonlocal calls
        calls += 1

    def count():
        return calls

    return bump, count


bump, count = make_counter()


def counted(x):
    bump()
    return x * count()


# A closure cell of a function made before the call: capture's copy is not
# the one `count` reads, nor replayed; refused at the assignment.
# CELL: changed-state-reads.py:[[@LINE-18]]:9: error: assigning free variable 'calls' of a function that exists before the call (a `nonlocal` of a closure made outside it) is not supported yet


def example_inputs():
    return (torch.randn(5, 4),)


def example_swap():
    return (torch.randn(5, 4), torch.randn(3, 4))


def example_nested():
    return (torch.randn(5, 4), torch.randn(6, 4), torch.randn(6))
