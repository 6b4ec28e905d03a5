# torch.func's transforms are refused where the program calls them, by
# name, whichever spelling it uses (torch.vmap is torch.func.vmap), instead
# of deep inside functorch.
# RUN: not %dync export %s:vmapped --emit=graph 2>&1 | FileCheck %s --check-prefix=VMAP
# RUN: not %dync export %s:differentiated --emit=graph 2>&1 | FileCheck %s --check-prefix=GRAD
import torch
import torch.func


def scale(a, b):
    return a * b


def vmapped(x):
    return torch.vmap(scale)(x, x)

# VMAP: function-transforms.py:[[@LINE-2]]:12: error: torch.func.vmap is not supported yet: its function runs under functorch's interpreters (batched or differentiated tensors), which capture does not model


def differentiated(x):
    return torch.func.grad(lambda t: (t * t).sum())(x)

# GRAD: function-transforms.py:[[@LINE-2]]:12: error: torch.func.grad is not supported yet


def example_inputs():
    return (torch.ones(3),)
