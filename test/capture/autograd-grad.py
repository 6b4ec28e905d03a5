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

# NOTE: dync: forces: calls under no_grad are not compiled (they run the original code): {{.*}}autograd-grad.py:[[@LINE+25]]:13: calling torch.autograd.grad with the example's sizes raised RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn

# The forward, then the backward: the gradient of the sum expanded, tanh's
# backward reading tanh's result itself (autograd's unpacked copy of it,
# detached, is not read), the product's backward reading the weight.
# FORCES-LABEL: graph @forces$grad(
# FORCES:         %[[X:[0-9]+]] = aten::requires_grad_.default(
# FORCES-NEXT:    %[[PRODUCT:[0-9]+]] = aten::mul.Tensor(%[[X]], %G_weight)
# FORCES-NEXT:    %[[TANH:[0-9]+]] = aten::tanh.default(%[[PRODUCT]])
# FORCES:         %[[SUM:[0-9]+]] = aten::sum.default(%[[TANH]])
# FORCES-NEXT:    %[[ONES:[0-9]+]] = aten::ones_like.default(%[[SUM]],
# FORCES:         %[[GRAD:[0-9]+]] = aten::expand.default(%{{[0-9]+}}, [4, 3])
# FORCES:         %[[BACK:[0-9]+]] = aten::tanh_backward.default(%[[GRAD]], %[[TANH]])
# FORCES-NEXT:    %[[INPUT_GRAD:[0-9]+]] = aten::mul.Tensor(%[[BACK]], %G_weight)
# FORCES-NEXT:    %[[NEG:[0-9]+]] = aten::neg.default(%[[INPUT_GRAD]])
# FORCES-NEXT:    return %[[NEG]]
# FORCES:         grad_mode true
# FORCES-NOT:     graph @forces(

weight = torch.nn.Parameter(torch.linspace(0.5, 1.5, 3))


def forces(pos):
    pos = pos.detach().requires_grad_(True)
    energy = torch.tanh(pos * weight).sum()
    return -torch.autograd.grad(energy, pos, create_graph=True)[0]


# With create_graph=False the backward reads what requires grad detached
# (the sigmoid's result itself, where autograd unpacked its saved copy):
# the saliency map requires no grad, as eager's. The copy autograd saved,
# which nothing reads, is not run (dead-code elimination runs on graphs
# that record autograd). The frozen variant keeps its grad-mode guard:
# under inference_mode eager's enable_grad() block records nothing and the
# call raises.
# SALIENCY-LABEL: graph @saliency$grad(
# SALIENCY:         %[[SIGMOID:[0-9]+]] = aten::sigmoid.default(
# SALIENCY-NEXT:    = aten::sum.default(%[[SIGMOID]])
# SALIENCY-NOT:     aten::detach.default(%[[SIGMOID]])
# SALIENCY:         = aten::expand.default(
# SALIENCY-NEXT:    %[[SAVED:[0-9]+]] = aten::detach.default(%[[SIGMOID]])
# SALIENCY-NEXT:    %[[BACK:[0-9]+]] = aten::sigmoid_backward.default(%{{[0-9]+}}, %[[SAVED]])
# SALIENCY-NEXT:    %[[WEIGHT:[0-9]+]] = aten::detach.default(%G_weight)
# SALIENCY-NEXT:    aten::mul.Tensor(%[[BACK]], %[[WEIGHT]])
# SALIENCY:         grad_mode true
# SALIENCY-LABEL: graph @saliency$frozen(
# SALIENCY:         grad_mode true
def saliency(x):
    with torch.enable_grad():
        x = x.detach().requires_grad_(True)
        score = torch.sigmoid(x * weight).sum()
        (grad,) = torch.autograd.grad(score, x)
    return grad.abs()


def example_inputs():
    return (torch.randn(4, 3),)
