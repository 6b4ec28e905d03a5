# Running backward from inside the captured function is refused with a
# message naming the call and the user's line (forces from an energy by
# torch.autograd.grad, a loss's .backward()). Tensor.register_hook is
# captured (tensor-hooks.py).
# RUN: not %dync export %s:forces --emit=graph 2>&1 | FileCheck %s --check-prefix=GRAD
# RUN: not %dync export %s:step --emit=graph 2>&1 | FileCheck %s --check-prefix=BACKWARD
import torch

weight = torch.nn.Parameter(torch.ones(3))


def forces(pos):
    pos = pos.detach().requires_grad_(True)
    energy = (pos * weight).pow(2).sum()
    # GRAD: autograd-inside.py:[[@LINE+1]]:13: error: torch.autograd.grad inside the captured function is not supported yet
    return -torch.autograd.grad(energy, pos, create_graph=True)[0]


def step(pos):
    loss = (pos * weight).sum()
    # BACKWARD: autograd-inside.py:[[@LINE+1]]:5: error: Tensor.backward inside the captured function is not supported yet
    loss.backward()
    return loss.detach()


def example_inputs():
    return (torch.randn(4, 3),)
