# --dynamic auto makes every dimension of every tensor argument symbolic,
# then reports which ones the program specialized, at which line, and the
# --dynamic spellings that hold.
# RUN: %dync export %s:Net.forward --emit=graph --dynamic auto 2>&1 | FileCheck %s
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x, y):
        h = self.fc(x)
        return h + y


def example_inputs():
    return (torch.randn(3, 8), torch.randn(3, 4))

# CHECK-DAG: dync: note: Net.forward: --dynamic auto: dimension 0 of L['x'] is dynamic: {{x_0|y_0}} in [2, inf]
# CHECK-DAG: dync: note: Net.forward: --dynamic auto: dimension 1 of L['x'] is static: the program specialized it to 8 at dynamic-auto.py:15 (h = self.fc(x))
# CHECK-DAG: dync: note: Net.forward: --dynamic auto: dimension 0 of L['y'] is dynamic: {{x_0|y_0}} in [2, inf]
# CHECK-DAG: dync: note: Net.forward: --dynamic auto: dimension 1 of L['y'] is static: the program specialized it to 4 at dynamic-auto.py:16 (return h + y)
# CHECK-DAG: dync: note: Net.forward: --dynamic auto: these hold: --dynamic 'x:0=[[S:x_0|y_0]][2, inf]' --dynamic 'y:0=[[S]][2, inf]'
# CHECK: graph @Net.forward
