# A branch on a tensor's values cannot be captured in one graph: the error
# names the line, shows it, and says what to write instead
# (test/e2e/test_data_dependent_advice.py runs the rewrites).
# RUN: not %dync export --data-branches=refuse %s:f --emit=graph 2>&1 | FileCheck %s
import torch


def f(x):
    y = x * 2
    if y.sum() > 0:
        return y
    return -y


def example_inputs():
    return (torch.randn(4),)

# CHECK: data-dependent-branch.py:10:8: error: data-dependent branch: the condition depends on a tensor's values, which are not known while capturing, so capture cannot decide it (nor can torch.export): keep the decision in tensors (torch.where(cond, a, b)) or branch with torch.cond(cond, true_fn, false_fn, operands){{$}}
# CHECK-NEXT: {{^}}    if y.sum() > 0:
# CHECK-NEXT: {{^}}       ^~~~~~~~~~~
