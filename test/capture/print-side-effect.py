# print() writes to stdout, which nothing in the computation reads back: the
# call is made after the graph by the rewritten code, with what it was given.
# RUN: %dync export %s:f --emit=graph | FileCheck %s
import torch


def f(x):
    y = torch.relu(x)
    print("relu done")
    return y


def example_inputs():
    return (torch.randn(4),)

# CHECK:      return %{{[0-9]+}}
# CHECK-NEXT: after call M['builtins'].print line 9 ("relu done",) {}
