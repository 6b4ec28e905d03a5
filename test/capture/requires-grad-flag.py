# requires_grad_() sets autograd's flag above the dispatcher, where no
# operator reaches the graph: a call in the function that switches whether
# a tensor requires grad (an input, or a tensor the graph computes) is
# refused, since the graph would leave the flag as it was. A call that
# changes nothing (the tensor already requires grad) is captured.
# RUN: not %dync export %s:on_input --emit=graph 2>&1 | FileCheck %s --check-prefix=INPUT
# RUN: not %dync export %s:on_computed --emit=graph 2>&1 | FileCheck %s --check-prefix=COMPUTED
# RUN: %dync export %s:unchanged --example grad_inputs --emit=graph | FileCheck %s --check-prefix=UNCHANGED
import torch


def on_input(w):
    w.requires_grad_()
    return w * 3

# INPUT: requires-grad-flag.py:[[@LINE-3]]:5: error: this call changes whether a tensor requires grad (requires_grad_()), which the graph does not record yet: its tensors would keep their old flag; make the change outside the exported function (on the inputs or the model's parameters before the call)


def on_computed(w):
    p = (w * 2).detach().requires_grad_()
    return p * 3

# COMPUTED: requires-grad-flag.py:[[@LINE-3]]:9: error: this call changes whether a tensor requires grad


def unchanged(w):
    w.requires_grad_()
    return w * 3

# UNCHANGED: graph @unchanged(%w: tensor<f32, [3], requires_grad> = L['w']) {
# UNCHANGED-NEXT: aten::mul.Tensor(%w, 3)


def example_inputs():
    return (torch.randn(3),)


def grad_inputs():
    return (torch.randn(3, requires_grad=True),)
