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
# RUN: %dync export %s:top_k --example top_k=top_k_inputs --emit=graph 2>&1 | FileCheck %s --check-prefix=TOPK
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
# for no materialized gradients: autograd never gives that output a
# gradient, so backward is captured given None there, as eager would call
# it, and passes the None through; the input keeps the calling convention.
# GRAD:      backward @"autograd-function.Clamp.backward"(%saved0: tensor<f32, [4, 3]>,
# GRAD-NEXT:     %grad0: tensor<f32, [4, 3]>) {
# GRAD-NEXT:   return (none,)
# GRAD-LABEL: graph @model_grad(
# GRAD:        %[[PRODUCT:[0-9]+]] = aten::mul.Tensor(%x, %G_model_weight)
# GRAD-NEXT:   %[[DETACHED:[0-9]+]] = aten::detach.default(%[[PRODUCT]])
# GRAD-NEXT:   %[[NODE:[0-9]+]] = dync::autograd_function.apply("autograd-function.Clamp", "autograd-function.Clamp.backward", [%[[PRODUCT]]], [%[[DETACHED]]], [%[[DETACHED]]], [-1], [false], false, [], [-1])
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


# Values and indices, the indices marked non-differentiable under
# set_materialize_grads(False): backward is given None for the indices
# (it tests for it) and a gradient for the values.
class TopK(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.set_materialize_grads(False)
        values, indices = x.topk(k, dim=-1)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        ctx.shape = x.shape
        return values, indices

    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        assert grad_indices is None
        if grad_values is None:
            return None, None
        (indices,) = ctx.saved_tensors
        return grad_values.new_zeros(ctx.shape).scatter(-1, indices, grad_values), None


def top_k(x, w):
    values, indices = TopK.apply(x * w, 2)
    return values, indices

# TOPK:      backward @"autograd-function.TopK.backward"(%saved0: tensor<i64, [4, 2]>,
# TOPK-NEXT:     %grad0: tensor<f32, [4, 2]>,
# TOPK-NEXT:     %grad1: tensor<i64, [4, 2]>) {
# TOPK-NEXT:   %[[Z:[0-9]+]] = aten::full.default([4, 3], 0, dtype=f32
# TOPK-NEXT:   %[[A:[0-9]+]] = aten::alias.default(%[[Z]])
# TOPK-NEXT:   %[[S:[0-9]+]] = aten::scatter.src(%[[A]], -1, %saved0, %grad0)
# TOPK-NEXT:   return (%[[S]],)
# TOPK-LABEL: graph @top_k(
# TOPK:        dync::autograd_function.apply("autograd-function.TopK", "autograd-function.TopK.backward", {{.*}}, [true, false], false,


def top_k_inputs():
    return torch.randn(4, 3), torch.ones(3, requires_grad=True)
