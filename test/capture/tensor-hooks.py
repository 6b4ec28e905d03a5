# Tensor.register_hook on a tensor the function computes, with grad mode on:
# the registration is an `after register_hook` line of the graph's output,
# the tensor one of the graph's values, and the function either read
# through a source (`from ...`) or made again by the rewritten code from
# the program's code object, its defaults and the contents of its closure
# cells (`with function ...`). A handle removed in the function leaves
# nothing to replay. What the rewritten code cannot do is refused at the
# registration's line or at the return.
# RUN: %dync export %s:Reversal.forward --emit=graph | FileCheck %s --check-prefix=LAMBDA
# RUN: %dync export %s:Reversal.forward --emit=bytecode | FileCheck %s --check-prefix=BYTECODE
# RUN: %dync export %s:Sources.forward --emit=graph | FileCheck %s --check-prefix=SOURCES
# RUN: %dync export %s:closure_values --emit=graph | FileCheck %s --check-prefix=CLOSURE
# RUN: %dync export %s:on_a_view_and_removed --emit=graph | FileCheck %s --check-prefix=VIEW
# RUN: %dync export %s:post_accumulate --emit=graph | FileCheck %s --check-prefix=POST
# RUN: not %dync export %s:without_grad --emit=graph 2>&1 | FileCheck %s --check-prefix=NOGRAD
# RUN: not %dync export %s:returns_handle --emit=graph 2>&1 | FileCheck %s --check-prefix=HANDLE
# RUN: not %dync export %s:written_after --emit=graph 2>&1 | FileCheck %s --check-prefix=INPLACE
# RUN: not %dync export %s:counts_calls --emit=graph 2>&1 | FileCheck %s --check-prefix=NONLOCAL
# RUN: not %dync export %s:partial_hook --emit=graph 2>&1 | FileCheck %s --check-prefix=PARTIAL
# RUN: not %dync export %s:non_leaf_post --emit=graph 2>&1 | FileCheck %s --check-prefix=NONLEAF
import functools

import torch
from torch import nn

weight = nn.Parameter(torch.ones(3))


class Reversal(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.alpha = 0.5

    def forward(self, x):
        h = torch.tanh(self.lin(x))
        if h.requires_grad:
            h.register_hook(lambda g: -self.alpha * g)
        return (h * 2).sum(-1)
# LAMBDA: %[[H:[0-9]+]] = aten::tanh.default
# LAMBDA: return %{{[0-9]+}}
# LAMBDA-NEXT: after register_hook %[[H]] with function "tensor-hooks:Reversal.forward.<locals>.<lambda>" line [[@LINE-4]] cells (self: L['self'])
# BYTECODE: LOAD_METHOD {{.*}}(register_hook)
# BYTECODE: LOAD_ATTR {{.*}}(CellType)
# BYTECODE: LOAD_DEREF {{.*}}(self)
# BYTECODE: MAKE_FUNCTION 8 (closure)
# BYTECODE-NEXT: PRECALL 1
# BYTECODE-NEXT: CALL 1
# BYTECODE-NEXT: POP_TOP


def halve(grad):
    return grad * 0.5


class Sources(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def scale_grad(self, grad):
        return grad * 3

    def forward(self, x):
        h = self.lin(x)
        h.register_hook(halve)
        h.register_hook(self.scale_grad)
        return h.relu()
# SOURCES: return %{{[0-9]+}}
# SOURCES-NEXT: after register_hook %[[H:[0-9]+]] from G['halve']
# SOURCES-NEXT: after register_hook %[[H]] from L['self'].scale_grad


def closure_values(x):
    h = x * weight
    mask = (x > 0).float()

    def hook(grad, scale=2.0):
        return grad * mask * scale

    h.register_hook(hook)
    return h.sum()
# CLOSURE: %[[MASK:[0-9]+]] = aten::_to_copy.default
# CLOSURE: after register_hook %{{[0-9]+}} with function "tensor-hooks:closure_values.<locals>.hook" line {{[0-9]+}} defaults (2.0) cells (mask = %[[MASK]])


def on_a_view_and_removed(x):
    h = x * weight
    first = h[:, 0]
    first.register_hook(lambda g: g * 10)
    handle = h.register_hook(lambda g: g * 100)
    handle.remove()
    return first.sum() + h.sum()
# VIEW: %[[VIEW:[0-9]+]] = aten::select.int
# VIEW: return %{{[0-9]+}}
# VIEW-NEXT: after register_hook %[[VIEW]] with function "tensor-hooks:on_a_view_and_removed.<locals>.<lambda>" line {{[0-9]+}}
# VIEW-NOT: after


def post_accumulate(x):
    weight.register_post_accumulate_grad_hook(lambda p: None)
    return (x * weight).sum()
# POST: after register_post_accumulate_grad_hook %G_weight with function "tensor-hooks:post_accumulate.<locals>.<lambda>" line {{[0-9]+}}


def without_grad(x):
    h = x * 2
    # NOGRAD: tensor-hooks.py:[[@LINE+1]]:5: error: Tensor.register_hook on a tensor that does not require grad: eager raises RuntimeError ("cannot register a hook on a tensor that doesn't require gradient") here, and a compiled call cannot raise it; register the hook only when the tensor requires grad (`if t.requires_grad: t.register_hook(...)`)
    h.register_hook(lambda g: g)
    return h


def returns_handle(x):
    h = x * weight
    handle = h.register_hook(lambda g: g)
    return h.sum(), handle
# HANDLE: error: returns_handle: the function returns a torch.utils.hooks.RemovableHandle, the handle of a hook registered inside the captured function, which the rewritten code cannot rebuild


def written_after(x):
    h = x * weight
    h.register_hook(lambda g: g * 2)
    h.mul_(3)
    return h.sum()
# INPLACE: error: Tensor.register_hook at {{.*}}tensor-hooks.py:[[@LINE-3]] registers a hook on a tensor the function then writes in place, which is not supported yet


def counts_calls(x):
    h = x * weight
    calls = 0

    def hook(grad):
        nonlocal calls
        calls += 1
        return grad

    h.register_hook(hook)
    return h.sum()
# NONLOCAL: error: Tensor.register_hook at {{.*}}tensor-hooks.py:[[@LINE-2]] registers function counts_calls.<locals>.hook, which assigns a free variable (`nonlocal`), not supported yet


def partial_hook(x):
    h = x * weight
    h.register_hook(functools.partial(torch.mul, other=0.5))
    return h.sum()
# PARTIAL: error: Tensor.register_hook at {{.*}}tensor-hooks.py:[[@LINE-2]] registers {{.*}}, which the rewritten code cannot make again after the graph yet


def non_leaf_post(x):
    h = x * weight
    # NONLEAF: tensor-hooks.py:[[@LINE+1]]:5: error: Tensor.register_post_accumulate_grad_hook on a tensor that is not a leaf
    h.register_post_accumulate_grad_hook(lambda p: None)
    return h.sum()


def example_inputs():
    return (torch.randn(4, 3),)
