# What capture cannot decide about a data-dependent value stops at the
# user's line in plain words, naming the value, what computed it and what
# to write instead (torch._check, torch.cond, torch.where, while_loop, ...;
# test/e2e/test_data_dependent_advice.py runs the rewrites), never torch's
# internal exception names.
# RUN: not %dync export --data-branches=refuse %s:branch --emit=graph 2>&1 | FileCheck %s --check-prefix=BRANCH
# RUN: not %dync export --data-branches=refuse %s:rounded --emit=graph 2>&1 | FileCheck %s --check-prefix=ROUND
# RUN: not %dync export --data-branches=refuse %s:sine --emit=graph 2>&1 | FileCheck %s --check-prefix=SINE
# RUN: not %dync export --data-branches=refuse %s:flagged --emit=graph 2>&1 | FileCheck %s --check-prefix=FLAG
# RUN: not %dync export --data-branches=refuse %s:floated --emit=graph 2>&1 | FileCheck %s --check-prefix=FLOAT
# RUN: not %dync export --data-branches=refuse %s:ctc --emit=graph 2>&1 | FileCheck %s --check-prefix=CTC
# RUN: not %dync export --data-branches=refuse %s:grouped --emit=graph 2>&1 | FileCheck %s --check-prefix=ITER
# RUN: not %dync export --data-branches=refuse %s:levels --emit=graph 2>&1 | FileCheck %s --check-prefix=STEPS
# RUN: not %dync export --data-branches=refuse %s:counted_loop --emit=graph 2>&1 | FileCheck %s --check-prefix=RANGE
import math

import torch


def branch(x, n):
    k = n.item()
    if k > 2:
        return x * 2
    return x

# BRANCH: data-dependent-errors.py:[[@LINE-4]]:8: error: data-dependent branch: the condition u0 > 2 depends on u0, a value computed from tensor data by torch.Tensor.item at {{.*}}data-dependent-errors.py:[[@LINE-5]], which capture cannot decide; if the program assumes one side, state what holds before this line with torch._check(...) (torch._check_is_size(...) for a size), which the graph then checks when it runs; if it needs both, decide on the tensor the value was read from instead, with torch.where(cond, a, b) or torch.cond(cond, true_fn, false_fn, operands){{$}}
# BRANCH-NEXT: {{^}}    if k > 2:
# BRANCH-NOT: GuardOnDataDependentSymNode


def rounded(x, n):
    k = n.item()
    return x * round(2.5, k)

# ROUND: data-dependent-errors.py:[[@LINE-2]]:16: error: round() with a number of digits is an operation graphs compute for a float or an int computed from tensor data and a constant int number of digits only (round(x, 2), round(k, -1)); keep the value a tensor and use torch.round(t, decimals=n)
# ROUND-NEXT: {{^}}    return x * round(2.5, k)
# ROUND-NOT: Exception


def sine(x, n):
    s = x.sum().item()
    return x * math.sin(s)

# SINE: data-dependent-errors.py:[[@LINE-2]]:16: error: sin of a number computed from tensor data is not an operation graphs compute yet (they compute + - * / // % ** unary - + abs, comparisons, & | ^ of bools and ints, divmod(), float(), int(), round(), and math.trunc, floor, ceil, sqrt, exp, log); keep the value a tensor and use torch's operation on it


def floated(x, n):
    s = x.sum().item()
    if s > 0.5:
        return x
    return -x

# FLOAT: data-dependent-errors.py:[[@LINE-4]]:8: error: data-dependent branch: the condition depends on a float computed from tensor data by torch.Tensor.item at {{.*}}data-dependent-errors.py:[[@LINE-5]], which capture cannot decide (nor can torch.export): keep the decision in tensors (torch.where(cond, a, b)) or branch with torch.cond
# FLOAT-NEXT: {{^}}    if s > 0.5:


def flagged(x, n):
    # A data-dependent bool may be returned or computed with, but a branch
    # on it is refused, as torch.export refuses it.
    if bool(x.sum() > 0):
        return x
    return -x

# FLAG: data-dependent-errors.py:[[@LINE-4]]{{(:[0-9]+)?}}: error: data-dependent branch: the condition depends on a bool computed from tensor data by bool at {{.*}}data-dependent-errors.py:[[@LINE-4]], which capture cannot decide (nor can torch.export): keep the decision in tensors (torch.where(cond, a, b)) or branch with torch.cond
# FLAG-NOT: GuardOnDataDependentSymNode


def ctc(x, n):
    log_probs = torch.zeros(5, 1, 3).log_softmax(2)
    return torch.nn.functional.ctc_loss(log_probs, n.view(1, 1) + 1, torch.tensor([5]), n.view(1))

# CTC: data-dependent-errors.py:[[@LINE-2]]:12: error: torch.ctc_loss gives a result whose size depends on tensor data (aten._ctc_loss.Tensor), and torch has no rule for that size in terms of a new symbol, so it cannot be captured (torch.export refuses it too): call it outside the exported function, on tensors the function returns (in ctc_loss, {{.*}})
# CTC-NOT: DynamicOutputShapeException


def grouped(x, n):
    # DINO's multi-crop grouping: a `for` over a tensor whose length is a
    # count torch.unique_consecutive computes from data.
    ends = torch.cumsum(torch.unique_consecutive(n.view(1), return_counts=True)[1], 0)
    out = x
    for end in ends:
        out = out + end
    return out

# ITER: data-dependent-errors.py:[[@LINE-4]]: error: iterating over a tensor: len needs the value of u0, a value computed from tensor data by torch.unique_consecutive at {{.*}}data-dependent-errors.py:[[@LINE-6]], which is known only when the graph runs, so capture cannot take it (nor can torch.export): compute it from Python numbers or sizes (x.shape) rather than from a tensor's values, or, if the program assumes one value n, state it before this line with torch._check(value == n), which the graph then checks when it runs
# ITER-NOT: GuardOnDataDependentSymNode


def levels(x, n):
    # Deformable-DETR's reference points: level sizes kept in a tensor, so
    # each size torch.linspace needs as an int is a value of its data.
    shapes = torch.as_tensor([(2, 2), (1, 3)]) * n
    out = []
    for h, w in shapes:
        out.append(torch.linspace(0.5, h - 0.5, h))
    return torch.cat(out) + x.sum()

# STEPS: data-dependent-errors.py:[[@LINE-3]]:20: error: torch.linspace needs the value of u0, a value computed from tensor data by torch.Tensor.__index__ at {{.*}}data-dependent-errors.py:[[@LINE-3]], which is known only when the graph runs, so capture cannot take it (nor can torch.export): compute it from Python numbers or sizes (x.shape) rather than from a tensor's values, or, if the program assumes one value n, state it before this line with torch._check(value == n), which the graph then checks when it runs
# STEPS-NEXT: {{^}}        out.append(torch.linspace(0.5, h - 0.5, h))
# STEPS-NOT: GuardOnDataDependentSymNode


def counted_loop(x, n):
    # A Python loop whose trip count is read from data.
    out = x
    for i in range(n.item()):
        out = out + i
    return out

# RANGE: data-dependent-errors.py:[[@LINE-4]]:14: error: range() over a number computed from tensor data: the loop's trip count is known only when the graph runs, while capture unrolls Python loops, so it cannot be captured (torch.export refuses it too): loop in the graph with torch's while_loop over tensors (torch._higher_order_ops.while_loop(cond_fn, body_fn, carried)), or compute the iterations with tensor operations
# RANGE-NEXT: {{^}}    for i in range(n.item()):


def example_inputs():
    return (torch.randn(4), torch.tensor(2))
