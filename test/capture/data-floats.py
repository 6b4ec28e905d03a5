# Floats read from tensor data stay graph values where torch keeps them
# (arithmetic, a scalar argument); where a call needs one as a number (an
# epsilon, a scale factor, the end of an arange), the float is specialized to
# the example's value: the graph checks `f == value` with a fall-back check
# (and, at zero, the sign, since -0.0 == 0.0), and export notes it. A NaN
# example is refused: no equality states it. --data-branches=refuse keeps
# the refusal.
# RUN: %dync export %s:kept %s:epsilon %s:scale %s:arange_end --emit=graph 2>%t.err | FileCheck %s
# RUN: FileCheck %s --check-prefix=NOTES < %t.err
# RUN: %dync export %s:at_zero --example at_zero=zero_inputs --emit=graph 2>/dev/null | FileCheck %s --check-prefix=ZERO
# RUN: not %dync export %s:epsilon --example epsilon=nan_inputs -o %t.so 2>&1 | FileCheck %s --check-prefix=NAN
# RUN: test ! -e %t.so
# RUN: not %dync export %s:epsilon --data-branches=refuse --emit=graph 2>&1 | FileCheck %s --check-prefix=REFUSE
import torch
import torch.nn.functional as F


def kept(x):
    s = float(x.max())
    m = x.mean().item()
    return torch.clamp(x, min=m) * (s * 0.5 + 1.0)


def epsilon(x):
    m = x.abs().mean().item()
    return F.layer_norm(x, (4,), eps=m)


def scale(x):
    s = x.abs().max().item()
    return F.interpolate(x.view(1, 1, 3, 4), scale_factor=s + 1.0)


def arange_end(x):
    s = x.abs().max().item()
    return torch.arange(0.0, s, 0.25)


def at_zero(x):
    s = x.min().item()
    return (torch.arange(0.0, s + 1.0, 0.5) + 1.0) / s


def example_inputs():
    return (torch.arange(12.0).reshape(3, 4) / 8,)


def zero_inputs():
    return (torch.zeros(3, 4),)


def nan_inputs():
    return (torch.full((3, 4), float("nan")),)


# CHECK-LABEL: graph @kept(
# CHECK: %[[S:[0-9]+]] = aten::_local_scalar_dense.default({{.*}}) : float
# CHECK: %[[M:[0-9]+]] = aten::_local_scalar_dense.default({{.*}}) : float
# CHECK: aten::clamp.default(%x, %[[M]]
# CHECK: sym::mul.default(%[[S]], 0.5) : float
# CHECK-NOT: _assert_async
# CHECK: return

# CHECK-LABEL: graph @epsilon(
# CHECK: %[[E:[0-9]+]] = aten::_local_scalar_dense.default({{.*}}) : float
# CHECK: %[[EQ:[0-9]+]] = sym::eq.default(%[[E]], 0.6875) : bool
# CHECK: aten::scalar_tensor.default(%[[EQ]]
# CHECK: aten::_assert_async.msg({{.*}}, "fall back: the float computed from tensor data by torch.Tensor.item at data-floats.py:25, which data-floats.py:26 needs as a number, differs from the example's value (0.6875), to which the graph was specialized")
# CHECK: aten::add.Tensor({{.*}}, 0.6875)
# CHECK: return

# CHECK-LABEL: graph @scale(
# CHECK: sym::eq.default(%{{[0-9]+}}, 1.375) : bool
# CHECK: aten::_assert_async.msg
# CHECK: tensor<f32, [1, 1, 7, 9]>
# CHECK: return

# CHECK-LABEL: graph @arange_end(
# CHECK: sym::eq.default(%{{[0-9]+}}, 1.375) : bool
# CHECK: aten::_assert_async.msg
# CHECK: aten::arange.start_step(0.0, 1.375, 0.25{{.*}}) : tensor<f32, [6]>
# CHECK: return

# NOTES-NOT: kept
# NOTES: note: epsilon: data-floats.py:26: the float computed from tensor data by torch.Tensor.item at data-floats.py:25 (return F.layer_norm(x, (4,), eps=m)) is specialized to the example's value (0.6875); calls where it differs run the original code
# NOTES: note: scale: data-floats.py:31: the float computed from tensor data by torch.Tensor.item at data-floats.py:30 {{.*}} is specialized to the example's value (1.375)
# NOTES: note: arange_end: data-floats.py:36: the float {{.*}} is specialized to the example's value (1.375)

# ZERO-LABEL: graph @at_zero(
# ZERO: %[[F:[0-9]+]] = aten::_local_scalar_dense.default({{.*}}) : float
# ZERO: %[[EQ:[0-9]+]] = sym::eq.default(%[[F]], 0.0) : bool
# ZERO: %[[SIGN:[0-9]+]] = aten::signbit.default(
# ZERO: %[[POS:[0-9]+]] = aten::logical_not.default(%[[SIGN]])
# ZERO: %[[BOTH:[0-9]+]] = aten::logical_and.default(%{{[0-9]+}}, %[[POS]])
# ZERO: aten::_assert_async.msg(%[[BOTH]], "fall back: the float
# ZERO: tensor<f32, [2]>
# ZERO: return

# NAN: data-floats.py:26:12: error: {{.*}}layer_norm needs the value of a float computed from tensor data by torch.Tensor.item at data-floats.py:25, which is known only when the graph runs{{.*}}(not specialized to the example's value: the example's value is nan, which no equality check can state)

# REFUSE: data-floats.py:26:12: error: {{.*}}layer_norm needs the value of a float computed from tensor data
# REFUSE-NOT: not specialized
