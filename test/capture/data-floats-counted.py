# Floats read from tensor data at one line (a comprehension over masks, as
# pruning code reports sparsity) are named once with their count when the
# program decides on them, not once per value; a tensor made of them is a
# graph value.
# RUN: not %dync export %s:sparsity_branch --data-branches=refuse --emit=graph 2>&1 | FileCheck %s
# RUN: %dync export %s:sparsity --emit=graph 2>&1 | FileCheck %s --check-prefix=TENSOR
import torch


def sparsity_branch(x, masks):
    kept = sum(float(m.sum()) for m in masks)
    if kept > 6:
        return x * 2
    return x

# CHECK: data-floats-counted.py:[[@LINE-4]]:8: error: data-dependent branch: the condition depends on a float computed from tensor data by float at {{.*}}data-floats-counted.py:[[@LINE-5]] (3 such values), which capture cannot decide (nor can torch.export)


def sparsity(x, masks):
    kept = sum(float(m.sum()) for m in masks)
    return x * torch.tensor(1.0 - kept / 12)

# TENSOR-NOT: specialized
# TENSOR: %[[K:[0-9]+]] = sym::sub.default(1.0, %{{[0-9]+}}) : float
# TENSOR: aten::scalar_tensor.default(%[[K]], dtype=f32
# TENSOR-NOT: _assert_async
# TENSOR: return


def example_inputs():
    return (torch.randn(3), [torch.ones(4), torch.zeros(4), torch.ones(4)])
