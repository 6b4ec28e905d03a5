# autograd.Function.apply on tensors that require grad, with grad mode on:
# forward runs over its inputs detached, backward is captured into a
# backward graph (its inputs: the tensors forward saved or backward read,
# then one gradient per output), and a dync::autograd_function.apply node
# gives the outputs their history.
# RUN: %dync export %s:Net.forward --emit=graph | FileCheck %s
# RUN: not %dync export --data-branches=refuse %s:Opaque.forward --emit=graph 2>&1 | FileCheck %s --check-prefix=OPAQUE
# RUN: not %dync export --data-branches=refuse %s:Counted.forward --emit=graph 2>&1 | FileCheck %s --check-prefix=COUNT
# RUN: %dync export %s:Dirty.forward --emit=graph | FileCheck %s --check-prefix=DIRTY
# RUN: not %dync export --data-branches=refuse %s:DirtyLeaf.forward --emit=graph 2>&1 | FileCheck %s --check-prefix=DIRTYLEAF
# RUN: not %dync export --data-branches=refuse %s:NumberGrad.forward --emit=graph 2>&1 | FileCheck %s --check-prefix=NUMBER
# RUN: %dync export %s:Keywords.forward --emit=graph | FileCheck %s --check-prefix=KEYWORDS
# RUN: not %dync export --data-branches=refuse %s:Misnamed.forward --emit=graph 2>&1 | FileCheck %s --check-prefix=MISNAMED
# RUN: %dync export %s:Listed.forward --emit=graph | FileCheck %s --check-prefix=LISTED
# RUN: not %dync export --data-branches=refuse %s:Appends.forward --emit=graph 2>&1 | FileCheck %s --check-prefix=APPENDS
# In an artifact only the variant for grad mode on is left out; calls under
# no_grad are still served.
# RUN: %dync export --data-branches=refuse %s:Opaque.forward -o %t.opaque.so -v 2>&1 | FileCheck %s --check-prefix=LEFTOUT
import torch
from torch import nn


class ClampPass(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lo):
        ctx.save_for_backward(x)
        ctx.lo = lo
        return x.clamp(min=lo), (x > lo).to(torch.int64)

    @staticmethod
    def backward(ctx, grad, grad_index):
        (x,) = ctx.saved_tensors
        return grad * (x > ctx.lo).to(grad.dtype) * 0.5, None


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(3))

    def forward(self, x):
        y, index = ClampPass.apply(x * self.weight, 0.25)
        return y.sum() + index.sum()

# CHECK:      backward @"autograd-function-backward.ClampPass.backward"(%saved0: tensor<f32, [4, 3]>,
# CHECK-NEXT:     %grad0: tensor<f32, [4, 3]>,
# CHECK-NEXT:     %grad1: tensor<i64, [4, 3]>) {
# CHECK-NEXT:   %[[GT:[0-9]+]] = aten::gt.Scalar(%saved0, 0.25)
# CHECK-NEXT:   %[[CAST:[0-9]+]] = aten::_to_copy.default(%[[GT]], dtype=f32)
# CHECK-NEXT:   %[[MUL:[0-9]+]] = aten::mul.Tensor(%grad0, %[[CAST]])
# CHECK-NEXT:   %[[HALF:[0-9]+]] = aten::mul.Tensor(%[[MUL]], 0.5)
# CHECK-NEXT:   return (%[[HALF]],)
# CHECK-NEXT: }
# CHECK-LABEL: graph @Net.forward(
# CHECK:        %[[PRODUCT:[0-9]+]] = aten::mul.Tensor(%x, %self_weight)
# CHECK-NEXT:   %[[DETACHED:[0-9]+]] = aten::detach.default(%[[PRODUCT]])
# CHECK-NEXT:   %[[CLAMP:[0-9]+]] = aten::clamp.default(%[[DETACHED]], 0.25)
# CHECK:        %[[INDEX:[0-9]+]] = aten::_to_copy.default(%{{[0-9]+}}, dtype=i64)
# CHECK-NEXT:   %[[NODE:[0-9]+]] = dync::autograd_function.apply("autograd-function-backward.ClampPass", "autograd-function-backward.ClampPass.backward", [%[[PRODUCT]]], [%[[CLAMP]], %[[INDEX]]], [%[[DETACHED]]], [0], [true, false], true, [], [-1, -1]) : tuple<tensor<f32, [4, 3]>, tensor<i64, [4, 3]>>
# CHECK-NEXT:   aten::sum.dim_IntList(%[[NODE]]#0, [])
# CHECK-NEXT:   aten::sum.dim_IntList(%[[NODE]]#1, [])


class Branchy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        if grad.sum() > 0:
            return grad
        return -grad


class Opaque(Net):
    def forward(self, x):
        return Branchy.apply(x * self.weight)

# OPAQUE: error: autograd-function-backward.Branchy.backward could not be captured, so calls that record autograd cannot run it: {{.*}}autograd-function-backward.py:[[@LINE-9]]: data-dependent branch

# LEFTOUT: Opaque.forward: calls with grad mode on are not compiled (they run the original code): {{.*}}Branchy.backward could not be captured


class TooFew(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        return x * scale

    @staticmethod
    def backward(ctx, grad):
        return grad


class Counted(Net):
    def forward(self, x):
        return TooFew.apply(x * self.weight, 2.0)

# COUNT: error: autograd-function-backward.TooFew.backward returned an incorrect number of gradients (expected 2, got 1)


class InPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.mark_dirty(x)
        return x.mul_(2)

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


class Dirty(Net):
    def forward(self, x):
        return InPlace.apply(x * self.weight)


class DirtyLeaf(Net):
    def forward(self, x):
        return InPlace.apply(self.weight)

# The input modified in place is the node's result: the node names it.
# DIRTY-LABEL: graph @Dirty.forward(
# DIRTY:        %[[PRODUCT:[0-9]+]] = aten::mul.Tensor(%x, %self_weight)
# DIRTY-NEXT:   %[[DETACHED:[0-9]+]] = aten::detach.default(%[[PRODUCT]])
# DIRTY-NEXT:   %[[WRITTEN:[0-9]+]] = aten::mul_.Tensor(%[[DETACHED]], 2)
# DIRTY-NEXT:   %[[NODE:[0-9]+]] = dync::autograd_function.apply("autograd-function-backward.InPlace", "autograd-function-backward.InPlace.backward", [%[[PRODUCT]]], [%[[WRITTEN]]], [], [0], [true], true, [], [0])
# DIRTY-NEXT:   return %[[NODE]]#0

# DIRTYLEAF: error: autograd-function-backward.InPlace.forward marks dirty (ctx.mark_dirty) a tensor the graph is given, which a graph applying it with autograd does not support: modify a tensor the program computes


class GradForNumber(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        return x * scale

    @staticmethod
    def backward(ctx, grad):
        return grad, grad.sum()


class NumberGrad(Net):
    def forward(self, x):
        return GradForNumber.apply(x * self.weight, 2.0)

# NUMBER: error: autograd-function-backward.GradForNumber.backward returned a gradient different than None at position 2, but the corresponding forward input was not a tensor


class Keywords(Net):
    def forward(self, x):
        return ClampPass.apply(lo=0.5, x=x * self.weight)[0]

# Keyword arguments are bound to forward's parameters, in its order.
# KEYWORDS-LABEL: graph @Keywords.forward(
# KEYWORDS:        %[[PRODUCT:[0-9]+]] = aten::mul.Tensor(%x, %self_weight)
# KEYWORDS-NEXT:   %[[DETACHED:[0-9]+]] = aten::detach.default(%[[PRODUCT]])
# KEYWORDS-NEXT:   aten::clamp.default(%[[DETACHED]], 0.5)
# KEYWORDS:        dync::autograd_function.apply("autograd-function-backward.ClampPass", "autograd-function-backward.ClampPass.backward", [%[[PRODUCT]]],


class Misnamed(Net):
    def forward(self, x):
        return ClampPass.apply(x * self.weight, low=0.5)

# MISNAMED: autograd-function-backward.py:[[@LINE-2]]:16: error: TypeError: forward() got an unexpected keyword argument 'low'


class Gated(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, extras):
        (gate,) = extras
        ctx.save_for_backward(gate)
        return x * gate, (x * 2,)

    @staticmethod
    def backward(ctx, grad, nested):
        (gate,) = ctx.saved_tensors
        return grad * gate, None


class Listed(Net):
    def forward(self, x):
        y, (doubled,) = Gated.apply(x * self.weight, [self.weight])
        return y, doubled

# A tensor requiring grad in a list is read detached and is no input of the
# node; a tensor nested in the result is returned as forward made it.
# LISTED:      backward @"autograd-function-backward.Gated.backward"(%saved0: tensor<f32, [3]>,
# LISTED-NEXT:     %grad0: tensor<f32, [4, 3]>) {
# LISTED-NEXT:   %[[MUL:[0-9]+]] = aten::mul.Tensor(%grad0, %saved0)
# LISTED-NEXT:   return (%[[MUL]],)
# LISTED-LABEL: graph @Listed.forward(
# LISTED:        %[[PRODUCT:[0-9]+]] = aten::mul.Tensor(%x, %self_weight)
# LISTED-NEXT:   %[[X:[0-9]+]] = aten::detach.default(%[[PRODUCT]])
# LISTED-NEXT:   %[[GATE:[0-9]+]] = aten::detach.default(%self_weight)
# LISTED-NEXT:   %[[Y:[0-9]+]] = aten::mul.Tensor(%[[X]], %[[GATE]])
# LISTED-NEXT:   %[[TWICE:[0-9]+]] = aten::mul.Tensor(%[[X]], 2)
# LISTED-NEXT:   %[[NODE:[0-9]+]] = dync::autograd_function.apply("autograd-function-backward.Gated", "autograd-function-backward.Gated.backward", [%[[PRODUCT]]], [%[[Y]]], [%[[GATE]]], [0], [true], true, [], [-1])
# LISTED-NEXT:   return (%[[NODE]]#0, %[[TWICE]])


class Appending(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, extras):
        extras.append(x)
        return x * extras[0]

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class Appends(Net):
    def forward(self, x):
        return Appending.apply(x * self.weight, [self.weight])

# APPENDS: error: autograd-function-backward.Appending.forward changes a list it was given that holds tensors requiring grad, which a graph recording autograd does not support


def example_inputs():
    return (torch.randn(4, 3),)
