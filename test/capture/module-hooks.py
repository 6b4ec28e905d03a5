# Forward hooks and pre-hooks registered on a module run around its forward
# as nn.Module._call_impl runs them, inlined into the graph: a pre-hook's
# replacement arguments (a tuple, one value, or with keywords a pair), a
# forward hook's replacement output, a hook returning None, `prepend`,
# `with_kwargs` and `always_call`. The hook tables' lengths are guarded, and
# each hook through its position in the table's order,
# `list(table.values())[i]` (never its handle id, which another process
# numbers differently): a function by its code, a bound method by
# `.__func__` and `.__self__`, a callable object by its class and the
# class's `__call__`; whether it takes keywords by its key at that
# position, `has_key table_with_kwargs : list(table)[i]` or `lacks_key`.
# RUN: %dync export %s:Hooked.forward --emit=graph | FileCheck %s --check-prefix=GRAPH
# RUN: %dync export %s:Hooked.forward --emit=guards | FileCheck %s --check-prefix=GUARDS
# RUN: not %dync export %s:own_call --emit=graph --example example_inputs_3 2>&1 | FileCheck %s --check-prefix=OWNCALL
# RUN: not %dync export %s:bad_pre_hook --emit=graph --example example_inputs_3 2>&1 | FileCheck %s --check-prefix=BADPRE
# RUN: not %dync export %s:backward_hooked --emit=graph --example example_inputs_3 2>&1 | FileCheck %s --check-prefix=BACKWARD
# RUN: not %dync export %s:tensor_in_hook --emit=graph --example example_inputs_3 2>&1 | FileCheck %s --check-prefix=TENSOR
import torch
from torch import nn


def double_input(module, args):
    # One value, not a tuple: the one positional argument.
    return args[0] * 2


def add_shift(module, args, kwargs):
    kwargs = dict(kwargs)
    kwargs["shift"] = kwargs.get("shift", 0.0) + 1.0
    return args, kwargs


def observe(module, args, output):
    return None


class Offset:
    def __init__(self, amount):
        self.amount = amount

    def __call__(self, module, args, output):
        return output + self.amount


class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, shift=0.0):
        return self.fc(x) + shift


class Hooked(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()
        self.inner.register_forward_pre_hook(double_input)
        self.inner.register_forward_pre_hook(add_shift, with_kwargs=True)
        self.inner.register_forward_hook(observe)
        self.inner.register_forward_hook(
            lambda m, args, kwargs, out: out * kwargs["shift"], with_kwargs=True, always_call=True
        )
        # Runs first.
        self.inner.register_forward_hook(Offset(0.5), prepend=True)
        self.inner.register_forward_hook(self.clamp)

    def clamp(self, module, args, output):
        return output.clamp(min=-1.0)

    def forward(self, x):
        return self.inner(x)


def example_inputs():
    return (torch.randn(2, 4),)


# Pre-hooks in order (x * 2, then shift = 1.0), forward, then the hooks in
# order: Offset (prepended), observe (None), the keyword hook, clamp.
# GRAPH:      %0 = aten::mul.Tensor(%x, 2)
# GRAPH-NEXT: %1 = aten::permute.default(%self_inner_fc_weight, [1, 0])
# GRAPH-NEXT: %2 = aten::addmm.default(%self_inner_fc_bias, %0, %1)
# GRAPH-NEXT: %3 = aten::add.Tensor(%2, 1.0)
# GRAPH-NEXT: %4 = aten::add.Tensor(%3, 0.5)
# GRAPH-NEXT: %5 = aten::mul.Tensor(%4, 1.0)
# GRAPH-NEXT: %6 = aten::clamp.default(%5, -1.0)
# GRAPH-NEXT: return %6

# GUARDS:      empty L['self']._modules['inner']._backward_hooks
# GUARDS-NEXT: empty L['self']._modules['inner']._backward_pre_hooks
# GUARDS-NEXT: empty M['torch.nn.modules.module']._global_forward_hooks
# GUARDS-NEXT: empty M['torch.nn.modules.module']._global_forward_pre_hooks
# GUARDS:      length L['self']._modules['inner']._forward_pre_hooks_with_kwargs : 1
# GUARDS-NEXT: length L['self']._modules['inner']._forward_pre_hooks : 2
# GUARDS-NEXT: function list(L['self']._modules['inner']._forward_pre_hooks.values())[0] : "module-hooks":double_input line 22
# GUARDS-NEXT: lacks_key L['self']._modules['inner']._forward_pre_hooks_with_kwargs : list(L['self']._modules['inner']._forward_pre_hooks)[0]
# GUARDS-NEXT: function list(L['self']._modules['inner']._forward_pre_hooks.values())[1] : "module-hooks":add_shift line 27
# GUARDS-NEXT: has_key L['self']._modules['inner']._forward_pre_hooks_with_kwargs : list(L['self']._modules['inner']._forward_pre_hooks)[1]
# GUARDS-NEXT: length L['self']._modules['inner']._forward_hooks_with_kwargs : 1
# GUARDS-NEXT: empty M['torch.nn.modules.module']._global_forward_hooks_with_kwargs
# GUARDS-NEXT: length L['self']._modules['inner']._forward_hooks : 4
# GUARDS-NEXT: type list(L['self']._modules['inner']._forward_hooks.values())[0] : "module-hooks":Offset
# GUARDS-NEXT: function type(list(L['self']._modules['inner']._forward_hooks.values())[0]).__call__ : "module-hooks":Offset.__call__ line 41
# GUARDS-NEXT: lacks_key L['self']._modules['inner']._forward_hooks_with_kwargs : list(L['self']._modules['inner']._forward_hooks)[0]
# GUARDS-NEXT: function list(L['self']._modules['inner']._forward_hooks.values())[1] : "module-hooks":observe line 33
# GUARDS-NEXT: lacks_key L['self']._modules['inner']._forward_hooks_with_kwargs : list(L['self']._modules['inner']._forward_hooks)[1]
# GUARDS-NEXT: function list(L['self']._modules['inner']._forward_hooks.values())[2] : "module-hooks":Hooked.__init__.<locals>.<lambda> line 62
# GUARDS-NEXT: has_key L['self']._modules['inner']._forward_hooks_with_kwargs : list(L['self']._modules['inner']._forward_hooks)[2]
# GUARDS-NEXT: type list(L['self']._modules['inner']._forward_hooks.values())[3] : builtins:method
# GUARDS-NEXT: same list(L['self']._modules['inner']._forward_hooks.values())[3].__self__ : L['self']
# GUARDS-NEXT: function list(L['self']._modules['inner']._forward_hooks.values())[3].__func__ : "module-hooks":Hooked.clamp line 68
# GUARDS-NEXT: lacks_key L['self']._modules['inner']._forward_hooks_with_kwargs : list(L['self']._modules['inner']._forward_hooks)[3]
# GUARDS:      empty L['self']._modules['inner']._modules['fc']._forward_hooks
# GUARDS:      equals list(L['self']._modules['inner']._forward_hooks.values())[0].amount : 0.5
# GUARDS-NOT:  _forward_hooks_always_called


class OwnCall(nn.Linear):
    def __call__(self, x):
        return super().__call__(x) * 2


own_call_layer = OwnCall(3, 3)
own_call_layer.register_forward_hook(observe)


def own_call(x):
    return own_call_layer(x)

# OWNCALL: module-hooks.py:[[@LINE-2]]:12: error: module G['own_call_layer'] has forward_hooks registered and its class module-hooks.OwnCall overrides __call__; hooks on such a module are not supported


bad_layer = nn.Linear(3, 3)
bad_layer.register_forward_pre_hook(lambda m, args, kwargs: args[0], with_kwargs=True)


def bad_pre_hook(x):
    return bad_layer(x)

# BADPRE: module-hooks.py:[[@LINE-2]]:12: error: forward pre-hook must return None or a tuple of (new_args, new_kwargs), but got a tensor value


backward_layer = nn.Linear(3, 3)
backward_layer.register_full_backward_hook(lambda m, grad_in, grad_out: None)


def backward_hooked(x):
    return backward_layer(x)

# BACKWARD: module-hooks.py:[[@LINE-2]]:12: error: module G['backward_layer'] has backward_hooks registered; backward hooks are not supported (they run in backward, through autograd functions wrapping the module's inputs and outputs)


bias_layer = nn.Linear(3, 3)
bias_layer.register_forward_hook(observe)


def add_bias_hook(bias):
    return lambda m, args, out: out + bias


bias_layer.register_forward_hook(add_bias_hook(torch.ones(3)))


def tensor_in_hook(x):
    return bias_layer(x)

# TENSOR: error: the tensor list(G['bias_layer']._forward_hooks.values())[1].__closure__[0].cell_contents is read through a module hook (a closure cell or attribute of the hook); tensors held by hooks are not supported as graph inputs yet


def example_inputs_3():
    return (torch.randn(2, 3),)
