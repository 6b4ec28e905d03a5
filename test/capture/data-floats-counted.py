# Floats read from tensor data at one line (a comprehension over masks, as
# pruning code reports sparsity) are named once with their count when a
# call needs to decide on them, not once per value.
# RUN: not %dync export %s:sparsity --emit=graph 2>&1 | FileCheck %s
import torch


def sparsity(x, masks):
    kept = sum(float(m.sum()) for m in masks)
    return x * torch.tensor(1.0 - kept / 12)

# CHECK: data-floats-counted.py:[[@LINE-2]]:16: error: {{.*}}tensor needs to decide a float computed from tensor data by float at {{.*}}data-floats-counted.py:[[@LINE-3]] (3 such values), which capture cannot decide (nor can torch.export)


def example_inputs():
    return (torch.randn(3), [torch.ones(4), torch.zeros(4), torch.ones(4)])
