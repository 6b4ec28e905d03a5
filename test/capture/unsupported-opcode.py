# A 'match' statement's opcode is named as unsupported, at its line.
# RUN: not %dync export %s:f --emit=graph 2>&1 | FileCheck %s
import torch


def f(x):
    match x.shape:
        case (n, c):
            return x.sum(1)
    return x


def example_inputs():
    return (torch.randn(4, 3),)

# CHECK: unsupported-opcode.py:8:14: error: unsupported opcode MATCH_SEQUENCE ('match' statements)
# CHECK-NEXT: {{^}}        case (n, c):
