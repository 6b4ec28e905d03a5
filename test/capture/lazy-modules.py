# A lazy module infers its parameters from its first input in a forward
# pre-hook; capture makes that first call happen, as eager mode would, and
# the materialized parameters are graph inputs like any other. Other
# pre-hooks run inlined around forward, their table guarded by its length.
# RUN: %dync export %s:model.forward --emit=graph | FileCheck %s
# RUN: %dync export %s:wrapped.forward --emit=guards | FileCheck %s --check-prefix=HOOK
import torch
from torch import nn

model = nn.Sequential(nn.LazyLinear(5), nn.ReLU(), nn.LazyLinear(2))

hooked = nn.Linear(3, 3)
hooked.register_forward_pre_hook(lambda module, args: (args[0] * 2,))
wrapped = nn.Sequential(hooked)

# CHECK:      graph @model.forward(%input: tensor<f32, [4, 3]> = L['input'],
# CHECK-NEXT: %self_0_weight: tensor<f32, [5, 3], requires_grad> =
# CHECK-NEXT: %self_0_bias: tensor<f32, [5], requires_grad> =
# CHECK-NEXT: %self_2_weight: tensor<f32, [2, 5], requires_grad> =
# CHECK:      aten::addmm.default(%self_2_bias

# HOOK:      empty L['self']._modules['0']._forward_pre_hooks_with_kwargs
# HOOK-NEXT: length L['self']._modules['0']._forward_pre_hooks : 1
# HOOK-NEXT: function list(L['self']._modules['0']._forward_pre_hooks.values())[0] : "lazy-modules":<lambda> line 13


def example_inputs():
    return (torch.randn(4, 3),)
