# autograd.Function.apply on tensors that require grad in a graph with a
# dynamic batch: the backward graph declares the symbols it mentions and
# reads them from the tensors it takes; a size none of them has as a
# dimension (a batch size kept on ctx, backward of a flatten) is an int
# input, passed by the node's last argument.
# RUN: %dync export %s:Net.forward --dynamic 'x:0=b[1,64]' --emit=graph | FileCheck %s
# RUN: %dync export %s:Flat.forward --dynamic 'x:0=b[1,64]' --emit=graph | FileCheck %s --check-prefix=FLAT
# RUN: not %dync export %s:DataSized.forward --dynamic 'x:0=b[1,64]' --emit=graph 2>&1 | FileCheck %s --check-prefix=DATA
import torch
from torch import nn


class SignSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sign(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (x.abs() <= 1).to(grad.dtype)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 5)

    def forward(self, x):
        return SignSTE.apply(self.fc(x))

# CHECK:      backward @"autograd-function-dynamic.SignSTE.backward"(%saved0: tensor<f32, [b, 5]>,
# CHECK-NEXT:     %grad0: tensor<f32, [b, 5]>)
# CHECK-NEXT:     symbols { b: [2, 64] } {
# CHECK:        aten::abs.default(%saved0) : tensor<f32, [b, 5]>
# CHECK:        aten::mul.Tensor(%grad0, %{{[0-9]+}}) : tensor<f32, [b, 5]>
# CHECK:      graph @Net.forward(%x: tensor<f32, [b, 3]>
# CHECK:        dync::autograd_function.apply("autograd-function-dynamic.SignSTE", "autograd-function-dynamic.SignSTE.backward", [%{{[0-9]+}}], [%{{[0-9]+}}], [%{{[0-9]+}}], [0], [true], true, [], [-1]) : tuple<tensor<f32, [b, 5]>>


class Flatten(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.shape = x.shape
        return x.reshape(-1) * 2

    @staticmethod
    def backward(ctx, grad):
        return grad.view(ctx.shape) * 2


class Flat(Net):
    def forward(self, x):
        return Flatten.apply(self.fc(x))

# FLAT:      backward @"autograd-function-dynamic.Flatten.backward"(%grad0: tensor<f32, [5*b]>,
# FLAT-NEXT:     %size0: int<b>)
# FLAT-NEXT:     symbols { b: [2, 64] } {
# FLAT-NEXT:   aten::view.default(%grad0, [b, 5]) : tensor<f32, [b, 5]>
# FLAT:        dync::autograd_function.apply("autograd-function-dynamic.Flatten", "autograd-function-dynamic.Flatten.backward", [%{{[0-9]+}}], [%{{[0-9]+}}], [], [0], [true], true, [b], [-1]) : tuple<tensor<f32, [5*b]>>


class KeepPositive(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        kept = grad[grad > 0]
        return torch.zeros_like(grad).index_put((grad > 0,), kept)


class DataSized(Net):
    def forward(self, x):
        return KeepPositive.apply(self.fc(x))

# DATA: autograd-function-dynamic.py:[[@LINE-2]]:16: error: autograd-function-dynamic.KeepPositive.backward computes the size u0 from tensor data, which a backward graph does not support yet


def example_inputs():
    return (torch.randn(4, 3),)
