# torch.autograd.grad inside the captured function: capture runs it on the
# fake tensors and records its backward's ATen calls after the forward's.
# With create_graph=True they read the forward's tensors themselves, saved
# outputs included (tanh's result, not the detached copy autograd unpacks),
# so the graph's own autograd differentiates them again (double backward);
# with create_graph=False they read what requires grad detached. Under
# no_grad eager's call raises, so the artifact holds the grad-mode variant
# only and such calls run the original code.
# RUN: %dync export %s:forces -o %t.forces.so -v 2>&1 | FileCheck %s --check-prefix=NOTE
# RUN: %dync inspect %t.forces.so | FileCheck %s --check-prefix=FORCES
# RUN: %dync export %s:saliency -o %t.saliency.so
# RUN: %dync inspect %t.saliency.so | FileCheck %s --check-prefix=SALIENCY
import torch

weight = torch.nn.Parameter(torch.linspace(0.5, 1.5, 3))


def forces(pos):
    pos = pos.detach().requires_grad_(True)
    energy = torch.tanh(pos * weight).sum()
    return -torch.autograd.grad(energy, pos, create_graph=True)[0]


def saliency(x):
    with torch.enable_grad():
        x = x.detach().requires_grad_(True)
        score = torch.sigmoid(x * weight).sum()
        (grad,) = torch.autograd.grad(score, x)
    return grad.abs()


def example_inputs():
    return (torch.randn(4, 3),)
