# A branch on a number computed from tensor data (a size from boolean-mask
# indexing, an item()) whose one side only raises: capture states with
# torch._check that the raising side is not taken and goes on along the
# other, as LLaVA's placeholder check `if x[mask].numel() != feats.numel():
# raise ValueError(...)` needs. The graph checks the statement when it runs;
# a value that breaks it runs the original code, which raises.
# RUN: %dync export %s:merge %s:asserted %s:counted --example merge=merge_inputs \
# RUN:   --example asserted=merge_inputs --emit=graph | FileCheck %s
# Both sides go on: still a data-dependent branch, at the user's line.
# RUN: not %dync export --data-branches=refuse %s:both_sides --example merge_inputs --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefix=BOTH
# A handler catches it: the exception is not the program's result.
# RUN: not %dync export --data-branches=refuse %s:caught --example merge_inputs --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefix=CAUGHT
import torch


def merge(x, feats):
    mask = x > 0
    if x[mask].numel() != feats.numel():
        raise ValueError(f"tokens {mask.sum()} and features {feats.numel()} do not match")
    return x.masked_scatter(mask, feats)


def asserted(x, feats):
    picked = x[x > 0]
    assert picked.shape[0] <= feats.shape[0], "too many"
    return picked.sum() + feats.sum()


def counted(n):
    k = n.item()
    if k < 0:
        raise ValueError("negative count")
    return torch.zeros(k)


def both_sides(x, feats):
    if x[x > 0].numel() != feats.numel():
        return feats
    return x


def caught(x, feats):
    try:
        if x[x > 0].numel() != feats.numel():
            raise ValueError("mismatch")
    except ValueError:
        pass
    return x


def merge_inputs():
    x = torch.tensor([1.0, -1.0, 2.0, -3.0, 4.0])
    return x, torch.tensor([10.0, 20.0, 30.0])


def example_inputs():
    return (torch.tensor(3),)

# CHECK-LABEL: graph @merge(
# CHECK:             symbols { u0: [3, 3] unbacked }
# CHECK-NEXT:        relations { u0 == 3 } {
# CHECK:         aten::masked_scatter.default(%x, %{{[0-9]+}}, %feats) : tensor<f32, [5]>

# CHECK-LABEL: graph @asserted(
# CHECK:         symbols { u0: [0, 3] unbacked } {

# CHECK-LABEL: graph @counted(
# CHECK-NEXT:        symbols { u0: [0, inf] unbacked } {
# CHECK:         aten::full.default([u0], 0

# BOTH: raise-only-data-dependent-size.py:39:8: error: data-dependent branch: the condition u0 != 3
# CAUGHT: raise-only-data-dependent-size.py:46:12: error: data-dependent branch: the condition u0 != 3
