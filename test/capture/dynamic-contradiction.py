# A --dynamic range the program contradicts: reshaping to a fixed 8 rows
# pins the batch dimension, so declaring it dynamic is an error.
# RUN: not %dync export %s:f --emit=graph --dynamic 'x:0=batch[2,64]' 2>&1 | FileCheck %s
import torch


def f(x):
    return x.view(8, -1).relu()


def example_inputs():
    return (torch.randn(8, 3),)

# CHECK: dynamic-contradiction.py:8:12: error: --dynamic 'x:0=batch[2,64]' contradicts the program: this line specializes dimension 0 of L['x'] to 8
# CHECK-NEXT: {{^}}    return x.view(8, -1).relu()
