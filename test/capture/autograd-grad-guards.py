# A graph that takes a gradient inside computed it from the history capture
# saw, which starts at its inputs: eager's backward goes on through an input
# the caller computed and runs hooks the caller registered. Each input that
# requires grad is guarded `autograd_leaf` (no history, no hook), the
# parameter included; one that does not require grad needs no such guard,
# nor does a graph that takes no gradient.
# RUN: %dync export %s:input_gradient --emit=guards | FileCheck %s
# RUN: %dync export %s:no_gradient --emit=guards | FileCheck %s --check-prefix=PLAIN
import torch

weight = torch.nn.Parameter(torch.linspace(0.5, 1.5, 3))

# CHECK-LABEL: guards @input_gradient(
# CHECK-NEXT:    tensor L['x'] : tensor<f32, [4, 3], requires_grad>
# CHECK-NEXT:    autograd_leaf L['x']
# CHECK-NEXT:    tensor L['scale'] : tensor<f32, [3]>
# CHECK-NEXT:    tensor G['weight'] : tensor<f32, [3], requires_grad>
# CHECK-NEXT:    autograd_leaf G['weight']
# CHECK-NOT:     autograd_leaf
# CHECK:       }
def input_gradient(x, scale):
    energy = torch.tanh(x * scale * weight).sum()
    return torch.autograd.grad(energy, (x, weight))


# PLAIN-NOT: autograd_leaf
def no_gradient(x, scale):
    return torch.tanh(x * scale * weight).sum()


def example_inputs():
    return (torch.randn(4, 3, requires_grad=True), torch.randn(3))
