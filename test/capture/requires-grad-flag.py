# requires_grad_() sets autograd's flag above the dispatcher, where no
# operator reaches the graph, and so does a factory's requires_grad=True:
# the oracle records each as aten::requires_grad_ (the dispatcher's form of
# the same call), which the graph makes when it runs. On an input it changes
# the caller's tensor, as eager's call does, and the input's guard keeps the
# flag the call came with; on a tensor the graph computes, a new leaf. A
# call that changes nothing (the tensor already requires grad) records
# nothing.
# RUN: %dync export %s:on_input --emit=graph | FileCheck %s --check-prefix=INPUT
# RUN: %dync export %s:on_input --emit=guards | FileCheck %s --check-prefix=INPUTGUARD
# RUN: %dync export %s:on_computed --emit=graph | FileCheck %s --check-prefix=COMPUTED
# RUN: %dync export %s:factory --emit=graph | FileCheck %s --check-prefix=FACTORY
# RUN: %dync export %s:unchanged --example grad_inputs --emit=graph | FileCheck %s --check-prefix=UNCHANGED
# Inside a torch.cond branch, whose results follow eager's rule for cond
# (the operands alone), the change is refused.
# RUN: not %dync export %s:in_branch --emit=graph 2>&1 | FileCheck %s --check-prefix=BRANCH
import torch


def on_input(w):
    w.requires_grad_()
    return w * 3

# INPUT:      graph @on_input(%w: tensor<f32, [3]> = L['w']) {
# INPUT-NEXT:   %[[W:[0-9]+]] = aten::requires_grad_.default(%w, true) : tensor<f32, [3], requires_grad>
# INPUT-NEXT:   aten::mul.Tensor(%[[W]], 3)
# INPUTGUARD: tensor L['w'] : tensor<f32, [3]>{{$}}


def on_computed(w):
    p = (w * 2).detach().requires_grad_()
    return p * 3

# COMPUTED:      %[[D:[0-9]+]] = aten::alias.default(
# COMPUTED-NEXT: %[[P:[0-9]+]] = aten::requires_grad_.default(%[[D]], true) : tensor<f32, [3], requires_grad>
# COMPUTED-NEXT: aten::mul.Tensor(%[[P]], 3)


def factory(w):
    return w * torch.ones(3, requires_grad=True)

# FACTORY:      aten::full.default([3], 1
# FACTORY:      %[[L:[0-9]+]] = aten::requires_grad_.default(%{{[0-9]+}}, true)
# FACTORY-NEXT: aten::mul.Tensor(%w, %[[L]])


def unchanged(w):
    w.requires_grad_()
    return w * 3

# UNCHANGED: graph @unchanged(%w: tensor<f32, [3], requires_grad> = L['w']) {
# UNCHANGED-NEXT: aten::mul.Tensor(%w, 3)


def in_branch(w):
    def leaf(w):
        return (w * 2).detach().requires_grad_() * 1

    def plain(w):
        return w * 3

    return torch.cond(w.sum() > 0, leaf, plain, (w,))

# BRANCH: requires-grad-flag.py:[[@LINE-7]]:16: error: this call changes whether a tensor requires grad (requires_grad_()) inside a torch.cond branch, which the graph does not record yet: its tensors would keep their old flag; make the change outside the branch


def example_inputs():
    return (torch.randn(3),)


def grad_inputs():
    return (torch.randn(3, requires_grad=True),)
