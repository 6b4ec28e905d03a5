# print() writes to stdout: a side effect the graph cannot hold.
# RUN: not %dync export %s:f --emit=graph 2>&1 | FileCheck %s
import torch


def f(x):
    y = torch.relu(x)
    print("relu done")
    return y


def example_inputs():
    return (torch.randn(4),)

# CHECK: print-side-effect.py:8:5: error: call to builtin 'print' is a side effect outside the graph
# CHECK-NEXT: {{^}}    print("relu done")
