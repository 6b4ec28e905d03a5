# --decompose=fusion applies torch's own decompositions to the operators
# core ATen keeps whole when they turn into pointwise operators, reductions
# and views: softmax becomes amax/sub/exp/sum/div, layer norm mean/sub/mul/
# sum/div (var_mean, by dync's own decomposition) then add/rsqrt/sub/mul/add,
# group norm and batch norm in eval mode the same kind of
# arithmetic on their statistics. Low-precision inputs keep the float32
# upcast torch's decompositions write. Operators torch tags pointwise (gelu)
# are computed by a loop as they are and stay whole, as do matrix products
# and batch norm in training mode, whose decomposition updates the running
# statistics in place.
# It is the default; -O0 (core) keeps every one of them whole. The decompositions are
# tried on fakes of their own, so they add no guards: with a dynamic batch,
# the guards are the same either way.
# RUN: %dync export %s:softmax %s:log_softmax %s:gelu %s:Norm.forward %s:Groups.forward \
# RUN:   %s:Batch.forward %s:Training.forward %s:Linear.forward %s:softmax_bf16 --emit=graph \
# RUN:   --decompose=fusion \
# RUN:   | FileCheck %s --check-prefix=FUSION
# RUN: %dync export %s:softmax %s:log_softmax %s:gelu %s:Norm.forward %s:Groups.forward \
# RUN:   %s:Batch.forward %s:Linear.forward %s:softmax_bf16 --emit=graph -O0 \
# RUN:   | FileCheck %s --check-prefix=CORE
# RUN: %dync export %s:softmax --emit=graph | FileCheck %s --check-prefix=DEFAULT
# RUN: %dync export %s:softmax %s:Norm.forward --emit=graph --decompose=core \
# RUN:   | FileCheck %s --check-prefix=CORE-EXPLICIT
# RUN: %dync export %s:Norm.forward --emit=graph --decompose=fusion --dynamic 'x:0=n[2,64]' \
# RUN:   | FileCheck %s --check-prefix=DYNAMIC
# RUN: %dync export %s:Norm.forward --emit=guards --decompose=fusion --dynamic 'x:0=n[2,64]' \
# RUN:   > %t.fusion
# RUN: %dync export %s:Norm.forward --emit=guards -O0 --dynamic 'x:0=n[2,64]' > %t.core
# RUN: diff %t.fusion %t.core
# RUN: not %dync export %s:softmax --emit=graph --decompose=everything 2>&1 \
# RUN:   | FileCheck %s --check-prefix=BAD
import torch
import torch.nn.functional as F
from torch import nn


def softmax(x):
    return torch.softmax(x, -1)


def log_softmax(x):
    return torch.log_softmax(x, -1)


def gelu(x):
    return F.gelu(x)




class Norm(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(8)

    def forward(self, x):
        return self.ln(x)


class Groups(nn.Module):
    def __init__(self):
        super().__init__()
        self.gn = nn.GroupNorm(2, 8)

    def forward(self, x):
        return self.gn(x)


class Batch(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(8).eval()

    def forward(self, x):
        return self.bn(x)


class Training(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(8)

    def forward(self, x):
        return self.bn(x)


class Linear(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(x)


def softmax_bf16(x):
    return torch.softmax(x.to(torch.bfloat16), -1)


def example_inputs():
    return (torch.randn(4, 8),)


# DEFAULT: aten::amax.default(%x, [-1], true)

# FUSION-LABEL: graph @softmax(
# FUSION:      %[[MAX:[0-9]+]] = aten::amax.default(%x, [-1], true)
# FUSION-NEXT: %[[SHIFTED:[0-9]+]] = aten::sub.Tensor(%x, %[[MAX]])
# FUSION-NEXT: %[[EXP:[0-9]+]] = aten::exp.default(%[[SHIFTED]])
# FUSION-NEXT: %[[SUM:[0-9]+]] = aten::sum.dim_IntList(%[[EXP]], [-1], true)
# FUSION-NEXT: aten::div.Tensor(%[[EXP]], %[[SUM]]) : tensor<f32, [4, 8]>
# FUSION-NOT:  aten::_softmax
# FUSION-LABEL: graph @log_softmax(
# FUSION:      aten::amax.default(%x, [-1], true)
# FUSION-NEXT: aten::sub.Tensor
# FUSION-NEXT: aten::exp.default
# FUSION-NEXT: aten::sum.dim_IntList
# FUSION-NEXT: aten::log.default
# FUSION-NEXT: aten::sub.Tensor
# FUSION-NOT:  aten::_log_softmax
# FUSION-LABEL: graph @gelu(
# FUSION:      aten::gelu.default(%x)
# FUSION-LABEL: graph @Norm.forward(
# FUSION:      %[[MEAN:[0-9]+]] = aten::mean.dim(%x, [1], true) : tensor<f32, [4, 1]>
# FUSION-NEXT: %[[DEV:[0-9]+]] = aten::sub.Tensor(%x, %[[MEAN]])
# FUSION-NEXT: %[[SQ:[0-9]+]] = aten::mul.Tensor(%[[DEV]], %[[DEV]])
# FUSION-NEXT: %[[SUMSQ:[0-9]+]] = aten::sum.dim_IntList(%[[SQ]], [1], true)
# FUSION-NEXT: %[[VAR:[0-9]+]] = aten::div.Tensor(%[[SUMSQ]], 8)
# FUSION-NEXT: %[[EPS:[0-9]+]] = aten::add.Tensor(%[[VAR]], 1e-05)
# FUSION-NEXT: %[[RSTD:[0-9]+]] = aten::rsqrt.default(%[[EPS]])
# FUSION-NEXT: %[[CENTERED:[0-9]+]] = aten::sub.Tensor(%x, %[[MEAN]])
# FUSION-NEXT: %[[NORMED:[0-9]+]] = aten::mul.Tensor(%[[CENTERED]], %[[RSTD]])
# FUSION-NEXT: %[[SCALED:[0-9]+]] = aten::mul.Tensor(%[[NORMED]], %self_ln_weight)
# FUSION-NEXT: aten::add.Tensor(%[[SCALED]], %self_ln_bias)
# FUSION-NOT:  aten::native_layer_norm
# FUSION-LABEL: graph @Groups.forward(
# FUSION:      %[[GROUPED:[0-9]+]] = aten::view.default(%x, [4, 2, 4, 1])
# FUSION-NEXT: aten::mean.dim(%[[GROUPED]], [2, 3], true)
# FUSION:      aten::rsqrt.default
# FUSION-NOT:  aten::native_group_norm
# FUSION-NOT:  aten::var_mean
# FUSION-LABEL: graph @Batch.forward(
# FUSION:      %[[VAR:[0-9]+]] = aten::_to_copy.default(%self_bn_running_var, dtype=f32)
# FUSION-NEXT: aten::add.Tensor(%[[VAR]], 1e-05)
# FUSION-NEXT: aten::sqrt.default
# FUSION-NEXT: aten::reciprocal.default
# FUSION:      aten::sub.Tensor(%x,
# FUSION-NOT:  aten::_native_batch_norm_legit
# FUSION-LABEL: graph @Training.forward(
# FUSION:      aten::_native_batch_norm_legit.default(%x, {{.*}}, true, 0.1, 1e-05)
# FUSION-LABEL: graph @Linear.forward(
# FUSION:      aten::addmm.default(%self_fc_bias, %x,
# FUSION-LABEL: graph @softmax_bf16(
# FUSION:      %[[HALF:[0-9]+]] = aten::_to_copy.default(%x, dtype=bf16) : tensor<bf16, [4, 8]>
# FUSION-NEXT: %[[UP:[0-9]+]] = aten::_to_copy.default(%[[HALF]], dtype=f32) : tensor<f32, [4, 8]>
# FUSION-NEXT: aten::amax.default(%[[UP]], [-1], true) : tensor<f32, [4, 1]>
# FUSION:      %[[QUOTIENT:[0-9]+]] = aten::div.Tensor({{.*}}) : tensor<f32, [4, 8]>
# FUSION-NEXT: aten::_to_copy.default(%[[QUOTIENT]], dtype=bf16) : tensor<bf16, [4, 8]>

# CORE-LABEL: graph @softmax(
# CORE:       aten::_softmax.default(%x, -1, false)
# CORE-LABEL: graph @log_softmax(
# CORE:       aten::_log_softmax.default(%x, -1, false)
# CORE-LABEL: graph @gelu(
# CORE:       aten::gelu.default(%x)
# CORE-LABEL: graph @Norm.forward(
# CORE:       aten::native_layer_norm.default(%x, [8], %self_ln_weight, %self_ln_bias, 1e-05)
# CORE-LABEL: graph @Groups.forward(
# CORE:       aten::native_group_norm.default(%x,
# CORE-LABEL: graph @Batch.forward(
# CORE:       aten::_native_batch_norm_legit_no_training.default(%x,
# CORE-LABEL: graph @Linear.forward(
# CORE:       aten::addmm.default(%self_fc_bias, %x,
# CORE-LABEL: graph @softmax_bf16(
# CORE:       aten::_softmax.default({{.*}}) : tensor<bf16, [4, 8]>

# CORE-EXPLICIT: aten::_softmax.default(%x, -1, false)
# CORE-EXPLICIT: aten::native_layer_norm.default(

# DYNAMIC:      symbols { n: [2, 64] } {
# DYNAMIC-NEXT: aten::mean.dim(%x, [1], true) : tensor<f32, [n, 1]>
# DYNAMIC:      aten::add.Tensor({{.*}}, %self_ln_bias) : tensor<f32, [n, 8]>

# BAD: --decompose: everything not in {core,fusion}
