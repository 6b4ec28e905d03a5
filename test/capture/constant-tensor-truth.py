# The truth of a one-element tensor made from the program's own numbers
# (FakeTensor.constant: `torch.tensor(0.95)`, and what operators compute
# from such values alone) is known while capturing: no decision on data, no
# guard, and so no refusal under --data-branches=refuse, even after an
# operator that draws random numbers. torch.distributions' argument checks
# on `Normal(0, 1)` are such decisions. A condition on the inputs' data is
# still refused.
# RUN: %dync export %s:gaussian_cutoff %s:constant_branch --data-branches=refuse --emit=graph | FileCheck %s
# RUN: not %dync export %s:data_branch --data-branches=refuse --emit=graph 2>&1 | FileCheck %s --check-prefix=DATA
import torch


def gaussian_cutoff(x):
    noise = torch.rand_like(x)
    target = torch.tensor(0.95, dtype=torch.float32)
    multiplier = torch.distributions.normal.Normal(0, 1).icdf(target)
    return x.mean(-1, keepdim=True) + x.std(-1, keepdim=True) * multiplier + noise

# CHECK-LABEL: graph @gaussian_cutoff(
# CHECK:       aten::erfinv.default
# CHECK:       return


def constant_branch(x):
    if torch.tensor(2.0) > 1:
        return x + 1
    return x - 1

# CHECK-LABEL: graph @constant_branch(
# CHECK-NOT:   aten::sub
# CHECK:       aten::add.Tensor(%x, 1)
# CHECK-NOT:   aten::sub
# CHECK:       return


def data_branch(x):
    if x.sum() > 1:
        return x + 1
    return x - 1

# DATA: constant-tensor-truth.py:{{[0-9]+}}:{{[0-9]+}}: error: data-dependent branch
# DATA-NEXT: if x.sum() > 1:


def example_inputs():
    return (torch.randn(2, 8),)
