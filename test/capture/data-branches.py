# Decisions on tensor data are specialized to the side the example inputs
# take: the graph holds a fall-back check of the condition (negated when
# the example's side is False), and export notes each on stderr. After an
# input was written or random numbers drawn the refusal stays, saying why;
# --data-branches=refuse keeps every refusal.
# RUN: %dync export %s:truth %s:negated %s:counted --emit=graph 2>%t.err | FileCheck %s
# RUN: FileCheck %s --check-prefix=NOTES < %t.err
# RUN: not %dync export %s:written_first --emit=graph 2>&1 | FileCheck %s --check-prefix=WRITTEN
# RUN: not %dync export %s:random_first --emit=graph 2>&1 | FileCheck %s --check-prefix=RANDOM
# RUN: not %dync export %s:truth --data-branches=refuse --emit=graph 2>&1 | FileCheck %s --check-prefix=REFUSE
import torch


def truth(x, mask):
    if mask.any():
        return x * 2
    return x - 1


def negated(x, mask):
    if (x > 100).all():
        return x
    return x.exp()


def counted(x, mask):
    n = mask.sum().item()
    if n < 2:
        return x + n
    return x * 3


def written_first(x, mask):
    x.add_(1)
    if (x > 0).any():
        return x * 2
    return x


def random_first(x, mask):
    noise = torch.rand(3)
    if (noise > 0.5).any():
        return x + noise
    return x


def example_inputs():
    return torch.ones(4, 3), torch.tensor([False, True, False])

# CHECK-LABEL: graph @truth
# CHECK: %[[ANY:[0-9]+]] = aten::any.default(%mask) : tensor<bool, []>
# CHECK-NEXT: aten::_assert_async.msg(%[[ANY]], "fall back: the decision on tensor data at data-branches.py:15 takes the other side than the example's (True), to which the graph was specialized")
# CHECK-NEXT: aten::mul.Tensor(%x, 2)

# CHECK-LABEL: graph @negated
# CHECK: aten::any.dims(
# CHECK-NEXT: %[[ALL:[0-9]+]] = aten::logical_not.default(%{{[0-9]+}}) : tensor<bool, []>
# CHECK-NEXT: %[[NOT:[0-9]+]] = aten::logical_not.default(%[[ALL]])
# CHECK-NEXT: aten::_assert_async.msg(%[[NOT]], "fall back: the decision on tensor data at data-branches.py:21 takes the other side than the example's (False), to which the graph was specialized")
# CHECK-NEXT: aten::exp.default(%x)

# CHECK-LABEL: graph @counted
# CHECK: aten::_local_scalar_dense.default(%{{[0-9]+}}) : int<u0>
# CHECK-NEXT: %[[LT:[0-9]+]] = sym::lt.default(u0, 2) : bool
# CHECK-NEXT: %[[T:[0-9]+]] = aten::scalar_tensor.default(%[[LT]]
# CHECK: aten::_assert_async.msg(%{{[0-9]+}}, "fall back: the decision on tensor data at data-branches.py:28 takes the other side than the example's (True), to which the graph was specialized")
# CHECK-NEXT: aten::add.Tensor(%x, u0)

# NOTES: note: truth: data-branches.py:15: the decision on tensor data (if mask.any():) is specialized to the example's side (True); calls that take the other side run the original code; to compile both, keep the decision in tensors (torch.where(cond, a, b)) or use torch.cond(cond, true_fn, false_fn, operands)
# NOTES: note: negated: data-branches.py:21: the decision on tensor data (if (x > 100).all():) is specialized to the example's side (False)
# NOTES: note: counted: data-branches.py:28: the decision on tensor data (if n < 2:) is specialized to the example's side (True)

# WRITTEN: data-branches.py:35: error: data-dependent branch: the condition depends on a tensor's values, {{.*}} (not specialized to the example's side: aten::add_.Tensor writes an input before it, so the original code could not run again)

# RANDOM: data-branches.py:42: error: data-dependent branch: {{.*}} (not specialized to the example's side: aten::{{.*}} draws random numbers, from which the graph computes the condition, and a call draws others)

# REFUSE: data-branches.py:15: error: data-dependent branch: the condition depends on a tensor's values, which are not known while capturing, so capture cannot decide it (nor can torch.export): keep the decision in tensors (torch.where(cond, a, b)) or branch with torch.cond(cond, true_fn, false_fn, operands)
# REFUSE-NOT: not specialized
