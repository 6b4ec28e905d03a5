# Running backward, or registering a hook backward calls, from inside the
# captured function is refused with a message naming the call and the
# user's line (forces from an energy by torch.autograd.grad, a loss's
# .backward(), Tensor.register_hook on an intermediate); an export whose
# first variant does not call them keeps it and leaves the grad-mode
# variant out (-v says why).
# RUN: not %dync export %s:forces --emit=graph 2>&1 | FileCheck %s --check-prefix=GRAD
# RUN: not %dync export %s:step --emit=graph 2>&1 | FileCheck %s --check-prefix=BACKWARD
# RUN: not %dync export %s:hooked --emit=graph 2>&1 | FileCheck %s --check-prefix=HOOK
# RUN: %dync export %s:hooked_when_training -v -o %t.dync.so 2>&1 | FileCheck %s --check-prefix=VARIANT
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


def hooked(pos):
    hidden = pos * weight
    # HOOK: autograd-inside.py:[[@LINE+1]]:5: error: Tensor.register_hook inside the captured function is not supported yet
    hidden.register_hook(lambda grad: grad * 0.5)
    return hidden.sum()


def hooked_when_training(pos):
    hidden = pos * weight
    if hidden.requires_grad:
        hidden.register_hook(lambda grad: grad * 0.5)
    return hidden.sum()
# VARIANT: dync: hooked_when_training: calls with grad mode on are not compiled (they run the original code): {{.*}}autograd-inside.py:[[@LINE-2]]:9: Tensor.register_hook inside the captured function is not supported yet


def example_inputs():
    return (torch.randn(4, 3),)
