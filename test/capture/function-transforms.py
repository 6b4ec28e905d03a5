# torch.func's differentiating transforms are refused where the program
# calls them, by name, instead of deep inside functorch (vmap is captured:
# vmap.py).
# Each refused program is an entry of one export that goes on past each
# refusal, and each refusal is reported at its line, in entry order.
# RUN: not %dync export %s:differentiated %s:jacobian %s:vmapped_grad %s:forward_mode \
# RUN:   --keep-going --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefixes=GRAD,JACREV,VMAPGRAD,JVP
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
