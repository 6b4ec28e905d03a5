# --dynamic auto makes int arguments of 2 or more symbolic too, named after
# the argument: it reports which stayed dynamic, which the program
# specialized (with the line: `range(n)` unrolls the loop at the example's
# count, which pins n), and, where a capture with them symbolic stops,
# captures again with them constants and says why.
# RUN: %dync export %s:Net.forward --emit=graph --dynamic auto 2>&1 | FileCheck %s
# RUN: %dync export %s:loop --example loop_inputs --emit=guards --dynamic auto 2>&1 \
# RUN:   | FileCheck %s --check-prefix=LOOP
# RUN: %dync export %s:keywords --example keywords_inputs --emit=graph --dynamic auto 2>&1 \
# RUN:   | FileCheck %s --check-prefix=KWARGS
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x, n, k, flag, one):
        h = self.fc(x[:n])
        if k == 3:
            h = h * 2
        return h + one, torch.arange(n), flag


def example_inputs():
    return (torch.randn(16, 8), 6, 3, True, 1)


def loop(x, n):
    for i in range(n):
        x = x + i
    return x


def loop_inputs():
    return (torch.randn(4), 3)


# Ints that arrive through **kwargs are tried as the named ones are.
def keywords(x, **kwargs):
    y = x[: kwargs["n"]]
    if kwargs["k"] == 3:
        y = y * 2
    return y, torch.arange(kwargs["n"])


def keywords_inputs():
    return (torch.randn(16, 8),)


def keywords_kwargs():
    return {"n": 6, "k": 3}

# CHECK-DAG: dync: note: Net.forward: --dynamic auto: L['n'] is dynamic: n in [2, inf]
# CHECK-DAG: dync: note: Net.forward: --dynamic auto: L['k'] is static: the program specialized it to 3 at dynamic-auto-ints.py:{{[0-9]+}} (if k == 3:)
# CHECK-DAG: dync: note: Net.forward: --dynamic auto: these hold: --dynamic 'n=n[2, inf]' --dynamic 'x:0=x_0[2, inf]'
# CHECK-NOT: L['flag']
# CHECK-NOT: L['one']
# CHECK: graph @Net.forward(%x: tensor<f32, [x_0, 8]> = L['x'],
# CHECK-NEXT: %n: int<n> = L['n'],
# CHECK-NEXT: %k: int<3> = L['k'],

# LOOP: dync: note: loop: --dynamic auto: L['n'] is static: the program specialized it to 3 at dynamic-auto-ints.py:{{[0-9]+}} (for i in range(n):)
# LOOP: dync: note: loop: --dynamic auto: these hold: --dynamic 'x:0=x_0[2, inf]'
# LOOP: guards @loop
# LOOP: int L['n'] : 3

# KWARGS-DAG: dync: note: keywords: --dynamic auto: L['kwargs']['n'] is dynamic: n in [2, inf]
# KWARGS-DAG: dync: note: keywords: --dynamic auto: L['kwargs']['k'] is static: the program specialized it to 3 at dynamic-auto-ints.py:{{[0-9]+}} (if kwargs["k"] == 3:)
# KWARGS-DAG: dync: note: keywords: --dynamic auto: these hold: --dynamic 'n=n[2, inf]' --dynamic 'x:0=x_0[2, inf]' --dynamic 'x:1=x_1[2, inf]'
# KWARGS: graph @keywords(%x: tensor<f32, [x_0, x_1]> = L['x'],
# KWARGS-NEXT: %kwargs_n: int<n> = L['kwargs']['n'],
# KWARGS-NEXT: %kwargs_k: int<3> = L['kwargs']['k'])
