# Under --dynamic, the graph captured at a size torch specializes (b = 1)
# is folded into the general graph when it applies an autograd.Function
# too: each capture makes a backward graph of its own, so the two nodes name
# different backward graphs, and the fold compares those backward graphs
# at the size as it compares entry graphs (a size the general node passes
# as an int is the constant there). The general backward graph's range
# then starts at 1 with the entry's. `Scaled`'s backward treats batch 1
# apart (`if grad.shape[0] == 1`), so its graph for b = 1 with grad mode on
# stays apart, and the note names the backward graph's difference (its
# graph with grad mode off applies no Function and folds).
# RUN: rm -rf %t && mkdir -p %t
# RUN: %dync export %s:Reversed.forward %s:Scaled.forward -o %t/m.dync.so \
# RUN:   --dynamic 'x:0=b[1,64]' 2>&1 | FileCheck %s --check-prefix=NOTES
# RUN: %dync inspect %t/m.dync.so | FileCheck %s
import torch
from torch import nn


class Reverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.shape = x.shape
        return x.reshape(-1) * 1.0

    @staticmethod
    def backward(ctx, grad):
        return -grad.view(ctx.shape)


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1.0

    @staticmethod
    def backward(ctx, grad):
        if grad.shape[0] == 1:
            return grad * 2
        return grad * 3


class Reversed(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 5)

    def forward(self, x):
        return Reverse.apply(self.fc(x))


class Scaled(Reversed):
    def forward(self, x):
        return Scale.apply(self.fc(x))


def example_inputs():
    return (torch.randn(4, 3),)

# NOTES: Reversed.forward: --dynamic 'x:0=b[1,64]': the graph for b = 1 is the general graph there; one graph serves b in [1, 64]
# NOTES-NOT: Reversed.forward: {{.*}} stays apart
# NOTES: Scaled.forward: --dynamic 'x:0=b[1,64]': the graph for b = 1 stays apart: its backward graph for autograd-function-dynamic-fold.Scale differs: it computes `%{{[0-9]+}} = aten::mul.Tensor(%grad0, 2) : tensor<f32, [1, 5]>` where the general graph computes `%{{[0-9]+}} = aten::mul.Tensor(%grad0, 3) : tensor<f32, [1, 5]>` at {{.*}}autograd-function-dynamic-fold.py:{{[0-9]+}}:20

# CHECK:      graph @Reversed.forward(
# CHECK:      backward @"autograd-function-dynamic-fold.Reverse.backward"(%grad0: tensor<f32, [5*b]>,
# CHECK-NEXT:     %size0: int<b>)
# CHECK-NEXT:     symbols { b: [1, 64] } {
# CHECK:      graph @Reversed.forward$grad(
# CHECK:          symbols { b: [1, 64] } {
# CHECK-NOT:  Reverse.backward.1
# CHECK:      graph @Scaled.forward(
# CHECK:      backward @"autograd-function-dynamic-fold.Scale.backward"(%grad0: tensor<f32, [b, 5]>)
# CHECK-NEXT:     symbols { b: [2, 64] } {
# CHECK:      backward @"autograd-function-dynamic-fold.Scale.backward.1"(%grad0: tensor<f32, [1, 5]>) {
# CHECK:      graph @Scaled.forward$b_1$grad(
