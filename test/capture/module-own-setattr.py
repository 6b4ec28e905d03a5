# Assigning an attribute of a module whose class defines its own
# __setattr__ in Python follows that __setattr__ as the program's code, and
# its `super().__setattr__(name, value)` files the value as nn.Module's does
# (kept in capture's state, assigned after the graph). nn.LSTM's class
# (nn.RNNBase) is such a class, so `self.train()` inside forward over an
# LSTM is captured (test/e2e/test_module_own_setattr.py). The assignment
# after the graph runs the class's __setattr__ again, so one that changes
# the value (or keeps other state) is refused.
# RUN: %dync export %s:Checking.forward --emit=graph | FileCheck %s --check-prefix=CHECKING
# RUN: %dync export %s:Checking.forward --emit=guards | FileCheck %s --check-prefix=GUARD
# RUN: %dync export %s:ModeSwitch.forward --emit=graph | FileCheck %s --check-prefix=MODES
# RUN: not %dync export %s:Converting.forward --emit=graph 2>&1 | FileCheck %s --check-prefix=CONVERT
import torch
import torch.nn as nn


class Converting(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 1.0

    def __setattr__(self, name, value):
        if name == "scale":
            value = float(value) / 2
        super().__setattr__(name, value)

    def forward(self, x):
        self.scale = x.shape[0]
        return x * self.scale


# CONVERT: module-own-setattr.py:[[@LINE-4]]:9: error: assigning attribute 'scale' of L['self'] (its class's own __setattr__ does more than hand the value to nn.Module.__setattr__ (it changes the value or keeps other state), which the assignment after the graph would do again; a side effect outside the graph)


class Checking(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 1.0

    def __setattr__(self, name, value):
        if name == "scale" and value <= 0:
            raise ValueError(f"scale must be positive, got {value}")
        super().__setattr__(name, value)

    def forward(self, x):
        self.scale = x.shape[0]
        return x * self.scale


# CHECKING: aten::mul.Tensor(%x, 4)
# CHECKING: after set L['self'].scale = 4
# The class's __setattr__ is pinned, and nn.Module's that it calls:
# GUARD: function type(L['self']).__setattr__ : "module-own-setattr":Checking.__setattr__
# GUARD: function M['torch.nn.modules.module'].Module.__setattr__


class ModeSwitch(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(3, 5, dropout=0.0)

    def forward(self, x):
        self.train()
        out, _ = self.rnn(x)
        self.eval()
        return out


# The modes the program leaves, set on every module after the graph:
# MODES:      return
# MODES-NEXT: after set L['self'].training = false
# MODES-NEXT: after set L['self']._modules['rnn'].training = false
model = ModeSwitch()


def example_inputs():
    return (torch.randn(4, 3, 3),)
