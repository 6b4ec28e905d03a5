# torch.func's differentiating transforms are refused where the program
# calls them, by name, instead of deep inside functorch (vmap is captured:
# vmap.py).
# RUN: not %dync export %s:differentiated --emit=graph 2>&1 | FileCheck %s --check-prefix=GRAD
# RUN: not %dync export %s:jacobian --emit=graph 2>&1 | FileCheck %s --check-prefix=JACREV
# RUN: not %dync export %s:vmapped_grad --emit=graph 2>&1 | FileCheck %s --check-prefix=VMAPGRAD
# RUN: not %dync export %s:forward_mode --emit=graph 2>&1 | FileCheck %s --check-prefix=JVP
import torch
import torch.func


def differentiated(x):
    return torch.func.grad(lambda t: (t * t).sum())(x)

# GRAD: function-transforms.py:[[@LINE-2]]:12: error: torch.func.grad is not supported yet: its function runs under functorch's interpreters (batched or differentiated tensors), which capture does not model


def jacobian(x):
    return torch.func.jacrev(torch.sin)(x)

# JACREV: function-transforms.py:[[@LINE-2]]:12: error: torch.func.jacrev is not supported yet


def vmapped_grad(x):
    return torch.vmap(torch.func.grad(lambda t: (t * t).sum()))(x)

# VMAPGRAD: function-transforms.py:[[@LINE-2]]:23: error: torch.func.grad is not supported yet


def forward_mode(x):
    # MeanFlow's total derivative along the flow: a tangent of ones for t.
    value, tangent = torch.func.jvp(lambda z: torch.sin(z) * 2, (x,), (torch.ones_like(x),))
    return value + tangent

# JVP: function-transforms.py:[[@LINE-3]]:22: error: torch.func.jvp is not supported yet: its function runs under functorch's interpreters


def example_inputs():
    return (torch.ones(3),)
