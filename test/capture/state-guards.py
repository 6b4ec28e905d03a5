# The state a graph depends on besides its arguments is guarded where capture
# reads it: an inlined module's hook tables and the process's global ones
# (`empty`), a value read from the class is not shadowed by the instance
# (`absent`) and is still what the class holds (`equals`/`function` on
# `type(...)`), a module-level helper is still the function captured
# (`function G[...]`, `builtin G[...]`), and what its closure cells hold.
# RUN: %dync export %s:Model.forward --emit=guards | FileCheck %s
# RUN: not %dync export %s:takes_subclass --emit=guards --example subclass_inputs 2>&1 \
# RUN:   | FileCheck %s --check-prefix=SUBCLASS
# RUN: not %dync export %s:takes_negative --emit=guards --example negative_inputs 2>&1 \
# RUN:   | FileCheck %s --check-prefix=NEGATIVE
import torch
from torch import nn

act = torch.relu


def make_offset(offset):
    def shift(x):
        return x + offset

    return shift


shift = make_offset(3)


class Model(nn.Module):
    scale = 0.5

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def helper(self, x):
        return x * self.scale

    def forward(self, x):
        return shift(act(self.helper(self.fc(x))))


class Sub(torch.Tensor):
    pass


def takes_subclass(x):
    return x + 1


def takes_negative(x):
    return x + 1


def example_inputs():
    return (torch.randn(2, 4),)


def subclass_inputs():
    return (torch.randn(2, 4).as_subclass(Sub),)


def negative_inputs():
    return (torch._neg_view(torch.randn(2, 4)),)


# CHECK:      guards @Model.forward(self, x) {
# CHECK:        equals L['self'].training : true
# CHECK-NEXT:   function G['shift'] : "state-guards":make_offset.<locals>.shift line {{[0-9]+}}
# CHECK-NEXT:   equals G['shift'].__closure__[0].cell_contents : 3
# CHECK-NEXT:   builtin G['act'] : torch:relu
# CHECK-NEXT:   absent L['self'].helper
# CHECK-NEXT:   function type(L['self']).helper : "state-guards":Model.helper line {{[0-9]+}}
# CHECK-NEXT:   type L['self']._modules['fc'] : torch.nn.modules.linear:Linear
# CHECK-NEXT:   equals L['self']._modules['fc'].training : true
# CHECK-NEXT:   empty L['self']._modules['fc']._forward_hooks
# CHECK-NEXT:   empty L['self']._modules['fc']._forward_pre_hooks
# CHECK-NEXT:   empty L['self']._modules['fc']._backward_hooks
# CHECK-NEXT:   empty L['self']._modules['fc']._backward_pre_hooks
# CHECK-NEXT:   empty M['torch.nn.modules.module']._global_forward_hooks
# CHECK-NEXT:   empty M['torch.nn.modules.module']._global_forward_pre_hooks
# CHECK-NEXT:   empty M['torch.nn.modules.module']._global_backward_hooks
# CHECK-NEXT:   empty M['torch.nn.modules.module']._global_backward_pre_hooks
# CHECK-NEXT:   absent L['self']._modules['fc']._compiled_call_impl
# CHECK-NEXT:   function type(L['self']._modules['fc']).__call__ : torch.nn.modules.module:Module._wrapped_call_impl line {{[0-9]+}}
# CHECK-NEXT:   absent L['self']._modules['fc']._call_impl
# CHECK-NEXT:   function type(L['self']._modules['fc'])._call_impl : torch.nn.modules.module:Module._call_impl line {{[0-9]+}}
# CHECK-NEXT:   absent L['self']._modules['fc'].forward
# CHECK-NEXT:   function type(L['self']._modules['fc']).forward : torch.nn.modules.linear:Linear.forward line {{[0-9]+}}
# CHECK-NEXT:   builtin M['torch.nn.modules.linear'].F.linear : torch._C._nn:linear
# CHECK-NEXT:   absent L['self'].scale
# CHECK-NEXT:   equals type(L['self']).scale : 0.5
# CHECK:      }

# SUBCLASS: error: L['x'] is a tensor of class 'state-guards.Sub', a subclass of torch.Tensor; tensor subclasses are not supported as inputs yet
# NEGATIVE: error: L['x'] has its negative bit set; resolve it first (x.resolve_neg(), x.resolve_conj()): lazy negative and conjugate views are not supported as inputs yet
