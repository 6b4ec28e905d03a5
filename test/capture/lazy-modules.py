# A lazy module infers its parameters from its first input in a forward
# pre-hook; capture makes that first call happen, as eager mode would, and
# the materialized parameters are graph inputs like any other. Other hooks
# still stop capture.
# RUN: %dync export %s:model.forward --emit=graph | FileCheck %s
# RUN: not %dync export %s:wrapped.forward --emit=graph 2>&1 | FileCheck %s --check-prefix=HOOK
import torch
from torch import nn

model = nn.Sequential(nn.LazyLinear(5), nn.ReLU(), nn.LazyLinear(2))

hooked = nn.Linear(3, 3)
hooked.register_forward_pre_hook(lambda module, args: None)
wrapped = nn.Sequential(hooked)

# CHECK:      graph @model.forward(%input: tensor<f32, [4, 3]> = L['input'],
# CHECK-NEXT: %self_0_weight: tensor<f32, [5, 3], requires_grad> =
# CHECK-NEXT: %self_0_bias: tensor<f32, [5], requires_grad> =
# CHECK-NEXT: %self_2_weight: tensor<f32, [2, 5], requires_grad> =
# CHECK:      aten::addmm.default(%self_2_bias

# HOOK: error: module L['self']{{.*}}0{{.*}} has forward_pre_hooks registered; modules with hooks are not supported


def example_inputs():
    return (torch.randn(4, 3),)
