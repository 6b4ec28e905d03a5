# `super().name` of a descriptor binds to self as an attribute read does: a
# base class's property runs its getter on self (torch.distributions'
# `logits` under a subclass), a descriptor class's `__get__` written in
# Python runs inlined. A profiler range (`record_function`, which
# nn.DataParallel's forward opens) leaves nothing in the graph.
# RUN: %dync export %S/../e2e/Inputs/super_and_profiler_ranges.py:Derived.forward \
# RUN:   %S/../e2e/Inputs/super_and_profiler_ranges.py:CategoricalHead.forward \
# RUN:   %S/../e2e/Inputs/super_and_profiler_ranges.py:Ranged.forward --emit=graph | FileCheck %s

# x * (weight * 2 + 1) + weight * 3
# CHECK-LABEL: graph @Derived.forward(
# CHECK: aten::mul.Tensor(%self_weight, 2)
# CHECK: aten::add.Tensor({{.*}}, 1)
# CHECK: aten::mul.Tensor(%x,
# CHECK: aten::mul.Tensor(%self_weight, 3)

# The parent's logits (normalized by logsumexp, decomposed), argmax, one_hot.
# CHECK-LABEL: graph @CategoricalHead.forward(
# CHECK: aten::amax
# CHECK: aten::argmax
# CHECK: aten::_to_copy.default({{.*}}, dtype=i64)

# CHECK-LABEL: graph @Ranged.forward(
# CHECK-NOT: record_function
# CHECK: aten::tanh
# CHECK-NOT: record_function
# CHECK: return
