# A branch on a tensor's values cannot be captured in one graph: the error
# names the line and shows it.
# RUN: not %dync export %s:f --emit=graph 2>&1 | FileCheck %s
import torch


def f(x):
    y = x * 2
    if y.sum() > 0:
        return y
    return -y


def example_inputs():
    return (torch.randn(4),)

# CHECK: data-dependent-branch.py:9:8: error: data-dependent branch: the condition depends on a tensor's values
# CHECK-NEXT: {{^}}    if y.sum() > 0:
# CHECK-NEXT: {{^}}       ^~~~~~~~~~~
