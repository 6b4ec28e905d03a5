# The entry's own closure cells (a decorator's wrapper reads the function it
# wraps and its settings from them) are the frame's free variables: guarded
# as `L['name']`, as an argument is, and read by the rewritten code with
# LOAD_DEREF. A function by its code, a constant by value, a config object
# by its type and the attributes read from it, a tensor as a graph input.
# RUN: %dync export %s:Model.forward --emit=guards | FileCheck %s
# RUN: %dync export %s:entry_with_cells --emit=guards --example cell_inputs \
# RUN:   | FileCheck %s --check-prefix=PLAIN
import functools

import torch
from torch import nn


class Settings:
    def __init__(self, factor):
        self.factor = factor


def scaled_by(settings, offset):
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return fn(*args, **kwargs) * settings.factor + offset

        return wrapper

    return decorate


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    @scaled_by(Settings(2.0), 0.5)
    def forward(self, x):
        return torch.relu(self.fc(x))


# CHECK-LABEL: guards @Model.forward(args, kwargs, fn, offset, settings) {
# CHECK-DAG: function L['fn'] : "entry-closure":Model.forward line {{[0-9]+}}
# CHECK-DAG: equals L['offset'] : 0.5
# CHECK-DAG: type L['settings'] : "entry-closure":Settings
# CHECK-DAG: equals L['settings'].factor : 2.0


def example_inputs():
    return (torch.randn(3, 4),)


def make_entry(bias, mode):
    def entry_with_cells(x):
        return x + bias if mode == "add" else x - bias

    return entry_with_cells


entry_with_cells = make_entry(torch.ones(4), "add")

# PLAIN-LABEL: guards @entry_with_cells(x, bias, mode) {
# PLAIN: tensor L['bias'] : tensor<f32, [4]>
# PLAIN: equals L['mode'] : "add"


def cell_inputs():
    return (torch.randn(3, 4),)
