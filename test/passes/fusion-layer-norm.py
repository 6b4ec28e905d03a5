# Layer norm is one kernel: with the fusion decompositions, var_mean becomes
# mean -> sub -> mul -> sum -> div, and fusion puts both row reductions, the
# normalization and the affine into one reduction kernel, as softmax is.
# RUN: %dync export %s:LayerNorm.forward --init 'LayerNorm()' --emit=optimized-graph | FileCheck %s
# RUN: %dync export %s:LayerNorm.forward --init 'LayerNorm()' --emit=optimized-graph --dynamic 'x:0=rows[1,8192]' | FileCheck %s --check-prefix=DYN
# RUN: %dync export %s:variance --emit=optimized-graph --dynamic 'x:1=n[1,4096]' | FileCheck %s --check-prefix=VAR
# RUN: %dync export %s:LayerNorm.forward --init 'LayerNorm()' -O0 --emit=graph | FileCheck %s --check-prefix=CORE
import torch
from torch import nn


class LayerNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(64)

    def forward(self, x):
        return self.norm(x)


def variance(x):
    return torch.var_mean(x, dim=-1, correction=1)


def example_inputs():
    return (torch.randn(8, 64),)

# CHECK:      kernel @k0(%in0: tensor<f32, [8, 64]>,
# CHECK-NEXT:            %in1: tensor<f32, [64], requires_grad>,
# CHECK-NEXT:            %in2: tensor<f32, [64], requires_grad>) {
# CHECK-NEXT:   %0 = aten::mean.dim(%in0, [1], true) : tensor<f32, [8, 1]>
# CHECK-NEXT:   %1 = aten::sub.Tensor(%in0, %0) : tensor<f32, [8, 64]>
# CHECK-NEXT:   %2 = aten::mul.Tensor(%1, %1) : tensor<f32, [8, 64]>
# CHECK-NEXT:   %3 = aten::sum.dim_IntList(%2, [1], true) : tensor<f32, [8, 1]>
# CHECK-NEXT:   %4 = aten::div.Tensor(%3, 64) : tensor<f32, [8, 1]>
# CHECK-NEXT:   %5 = aten::add.Tensor(%4, 1e-05) : tensor<f32, [8, 1]>
# CHECK-NEXT:   %6 = aten::rsqrt.default(%5) : tensor<f32, [8, 1]>
# CHECK-NEXT:   %7 = aten::mul.Tensor(%1, %6) : tensor<f32, [8, 64]>
# CHECK-NEXT:   %8 = aten::mul.Tensor(%7, %in1) : tensor<f32, [8, 64]>
# CHECK-NEXT:   %9 = aten::add.Tensor(%8, %in2) : tensor<f32, [8, 64]>
# CHECK-NEXT:   return %9
# CHECK-NEXT: }
# CHECK-NOT:  kernel
# CHECK:      graph @LayerNorm.forward(
# CHECK-NOT:    aten::
# CHECK:        %[[OUT:[0-9]+]] = @k0(%x, %self_norm_weight, %self_norm_bias) : tensor<f32, [8, 64]>
# CHECK-NEXT:   return %[[OUT]]

# DYN:      kernel @k0(%in0: tensor<f32, [rows, 64]>,
# DYN:        %0 = aten::mean.dim(%in0, [1], true) : tensor<f32, [rows, 1]>
# DYN:        %9 = aten::add.Tensor(%8, %in2) : tensor<f32, [rows, 64]>
# DYN-NEXT:   return %9
# DYN-NOT:  kernel
# DYN:      graph @LayerNorm.forward(
# DYN-NOT:    aten::
# DYN:        @k0(%x, %self_norm_weight, %self_norm_bias) : tensor<f32, [rows, 64]>

# The divisor is max(0, N - correction), which the size's range [2, 4096]
# (torch specializes sizes 0 and 1) simplifies to n - 1. Without keepdim the
# mean is the kernel's [8, 1] row mean, squeezed.
# VAR:      kernel @k0(%in0: tensor<f32, [8, n]>)
# VAR:        %0 = aten::mean.dim(%in0, [1], true) : tensor<f32, [8, 1]>
# VAR:        %3 = aten::sum.dim_IntList(%2, [1]) : tensor<f32, [8]>
# VAR-NEXT:   %4 = aten::div.Tensor(%3, n - 1) : tensor<f32, [8]>
# VAR-NEXT:   return (%0, %4)
# VAR:      graph @variance(
# VAR:        %[[K:[0-9]+]] = @k0(%x) : tuple<tensor<f32, [8, 1]>, tensor<f32, [8]>>
# VAR-NEXT:   %[[M:[0-9]+]] = aten::squeeze.dims(%[[K]]#0, [1]) : tensor<f32, [8]>
# VAR-NEXT:   return (%[[K]]#1, %[[M]])

# Core ATen alone (-O0 captures with it) keeps layer norm whole.
# CORE: aten::native_layer_norm.default(%x, [64], %self_norm_weight, %self_norm_bias, 1e-05)
