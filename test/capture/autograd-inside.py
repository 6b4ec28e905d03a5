# Accumulating gradients from inside the captured function (a loss's
# .backward()) is refused with a message naming the call and the user's
# line. torch.autograd.grad is captured (autograd-grad.py), and
# Tensor.register_hook too (tensor-hooks.py).
# RUN: not %dync export %s:step --emit=graph 2>&1 | FileCheck %s --check-prefix=BACKWARD
import torch

weight = torch.nn.Parameter(torch.ones(3))


def step(pos):
    loss = (pos * weight).sum()
    # BACKWARD: autograd-inside.py:[[@LINE+1]]:5: error: Tensor.backward inside the captured function is not supported yet
    loss.backward()
    return loss.detach()


def example_inputs():
    return (torch.randn(4, 3),)
