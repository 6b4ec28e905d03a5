# What fake tensors say a torch call gives is checked against the CPU kernel
# eager mode runs, on zero-filled tensors like the arguments when they are
# small: torch's decomposition of multilabel_margin_loss gives a 1-D input
# with reduction='none' a result of shape [1], where the kernel gives [].
# Capture stops instead of recording a graph that computes something else.
# RUN: not %dync export %s:unbatched --emit=signature 2>&1 | FileCheck %s --check-prefix=WRONG
# RUN: %dync export %s:batched --example batched_inputs --emit=signature | FileCheck %s
# A call with a data-dependent result is checked by ranks and dtypes (its
# data-dependent size has no value to compare, and unique's unrequested
# results are empty placeholders the meta function sizes as if asked).
# torch's fake unique_consecutive over the one dimension of a 1-D tensor,
# given as -1, gives a 2-D result, which this check refused; the oracle
# now calls it as the kernel runs it (docs/tensor-oracle.md), a 1-D result.
# RUN: %dync export %s:consecutive --example consecutive_inputs --emit=signature | FileCheck %s --check-prefix=RANK
# RUN: %dync export %s:consecutive_rows --example rows_inputs --emit=signature | FileCheck %s --check-prefix=ROWS
# A size given as a tensor fake mode knows the value of (Longformer's chunk
# count, `torch.div` of sizes) is checked on that value, not on zeros:
# RUN: %dync export %s:sized_by_tensor --example sized_inputs --emit=graph | FileCheck %s --check-prefix=SIZED
import torch
import torch.nn.functional as F


def unbatched(x, target):
    return F.multilabel_margin_loss(x, target, reduction="none")

# WRONG: kernel-check.py:[[@LINE-2]]:12: error: torch's meta functions give torch._C._nn.multilabel_margin_loss a result of (f32 [1]) where its CPU kernel gives (f32 []); a graph of what they say would not compute what eager mode does


def batched(x, target):
    return F.multilabel_margin_loss(x, target, reduction="none")

# CHECK: result: tensor<f32, [5]>


def sized_by_tensor(x):
    chunks = torch.div(x.size(1), 2, rounding_mode="trunc") - 1
    return x.new_zeros((2, chunks + 1, 3)) + x.sum()

# SIZED: aten::full.default([2, 6, 3], 0
# SIZED: return


def example_inputs():
    return (torch.randn(10), torch.zeros(10, dtype=torch.long))


def batched_inputs():
    return (torch.randn(5, 10), torch.zeros(5, 10, dtype=torch.long))


def consecutive(x):
    return torch.unique_consecutive(x, return_counts=True, dim=-1)

# RANK: result 0: tensor<f32, [u0]>
# RANK: result 1: tensor<i64, [u0]>


def consecutive_rows(x):
    return torch.unique_consecutive(x, return_counts=True, dim=0)

# ROWS: result 0: tensor<f32, [u0, 3]>
# ROWS: result 1: tensor<i64, [u0]>


def consecutive_inputs():
    return (torch.tensor([1.0, 1.0, 2.0, 2.0, 3.0]),)


def rows_inputs():
    return (torch.tensor([[1.0, 1.0, 2.0], [1.0, 1.0, 2.0], [0.0, 0.0, 0.0]]),)

def sized_inputs():
    return (torch.randn(2, 12),)
