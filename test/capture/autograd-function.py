# Custom autograd.Function.apply, module-level or defined while capturing:
# forward (and setup_context) are inlined on a context that keeps what they
# save for backward. Applied to tensors that require grad with grad mode on,
# forward runs over them detached and a node attaches the captured backward
# (autograd-function-backward.py has more).
# RUN: %dync export %s:module_level %s:local %s:model_no_grad --emit=graph | FileCheck %s
# RUN: %dync export %s:model_grad --emit=graph 2>&1 | FileCheck %s --check-prefix=GRAD
# forward runs with grad mode off, as apply runs it: a parameter it reads
# (not an input) records no autograd, so the graph for grad mode on reads it
# detached; under no_grad the graph is the plain product.
# RUN: %dync export %s:Reads.forward -o %t.reads.so
# RUN: %dync inspect %t.reads.so | FileCheck %s --check-prefix=READS
# RUN: %dync export %s:reads_no_grad --emit=graph | FileCheck %s --check-prefix=READSNOGRAD
import torch


class Clamp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lo=0.0):
        ctx.save_for_backward(x)
        ctx.mark_non_differentiable(x)
        ctx.set_materialize_grads(False)
        if ctx.needs_input_grad[0]:
            return x
        return x.clamp(min=lo)

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class Square(torch.autograd.Function):
    @staticmethod
    def forward(x, power=2):
        return x**power

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, power = inputs
        ctx.save_for_backward(x)
        ctx.power = power

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return ctx.power * x * grad, None


def module_level(x):
    return Clamp.apply(x, 0.5) + Square.apply(x)

# CHECK-LABEL: graph @module_level(
# CHECK-NEXT:  %0 = aten::clamp.default(%x, 0.5)
# CHECK-NEXT:  %1 = aten::pow.Tensor_Scalar(%x, 2)
# CHECK-NEXT:  %2 = aten::add.Tensor(%0, %1)


def local(x):
    class Twice(torch.autograd.Function):
        @staticmethod
        def forward(ctx, y):
            return y * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    return Twice.apply(x)

# CHECK-LABEL: graph @local(
# CHECK-NEXT:  aten::mul.Tensor(%x, 2)


class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(3))

    def forward(self, x):
        return Clamp.apply(x * self.weight)


model = Scaled()


def model_no_grad(x):
    with torch.no_grad():
        return model(x)

# CHECK-LABEL: graph @model_no_grad(
# CHECK:       aten::clamp.default(%{{[0-9]+}}, 0.0)


def model_grad(x):
    return model(x)

# Forward returns its input (detached), marked non-differentiable, and asks
# for no materialized gradients; backward passes the gradient through.
# GRAD:      backward @"autograd-function.Clamp.backward"(%saved0: tensor<f32, [4, 3]>,
# GRAD-NEXT:     %grad0: tensor<f32, [4, 3]>) {
# GRAD-NEXT:   return (%grad0,)
# GRAD-LABEL: graph @model_grad(
# GRAD:        %[[PRODUCT:[0-9]+]] = aten::mul.Tensor(%x, %G_model_weight)
# GRAD-NEXT:   %[[DETACHED:[0-9]+]] = aten::detach.default(%[[PRODUCT]])
# GRAD-NEXT:   %[[NODE:[0-9]+]] = dync::autograd_function.apply("autograd-function.Clamp", "autograd-function.Clamp.backward", [%[[PRODUCT]]], [%[[DETACHED]]], [%[[DETACHED]]], [0], [false], false, [], [-1])
# GRAD-NEXT:   return %[[NODE]]#0


class ScaleBy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, module):
        return x * module.weight

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class Reads(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(3))

    def forward(self, x):
        return ScaleBy.apply(x, self)

# READS-LABEL: graph @Reads.forward$grad(
# READS:         %[[W:[0-9]+]] = aten::detach.default(%self_weight)
# READS-NEXT:    aten::mul.Tensor(%x, %[[W]])


reads = Reads()


def reads_no_grad(x):
    with torch.no_grad():
        return reads(x)

# READSNOGRAD-LABEL: graph @reads_no_grad(
# READSNOGRAD:       aten::mul.Tensor(%x, %G_reads_weight)


def example_inputs():
    return (torch.randn(4, 3),)
