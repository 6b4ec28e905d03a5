# Branches on symbolic sizes ask torch's ShapeEnv, which keeps the decision
# as the symbol's range; grad-mode blocks and methods calling super() are
# captured too.
# RUN: %dync export %s:branch --emit=graph --dynamic 'x:0=n' | FileCheck %s --check-prefix=BRANCH
# RUN: not %dync export %s:branch --emit=graph --dynamic 'x:0=n[2,100]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=NARROW
# RUN: %dync export %s:sizes --emit=graph --dynamic 'x:0=n[2,64]' | FileCheck %s --check-prefix=SIZES
# RUN: %dync export %s:no_grad_block --emit=graph | FileCheck %s --check-prefix=NOGRAD
# RUN: %dync export %s:Gated.forward --emit=graph --init 'Gated(3, 3)' | FileCheck %s --check-prefix=SUPER
import torch
from torch import nn


def branch(x):
    if x.shape[0] > 4:
        return x.sum(0)
    return x.mean(0)

# BRANCH:      graph @branch(%x: tensor<f32, [n, 3]> = L['x'])
# BRANCH-NEXT: symbols { n: [5, inf] } {
# BRANCH-NEXT: aten::sum.dim_IntList(%x, [0])

# NARROW: symbolic.py:15:8: error: --dynamic 'x:0=n[2,100]' contradicts the program: this line assumes dimension 0 of L['x'] is in [5, 100]
# NARROW-NEXT: {{^}}    if x.shape[0] > 4:


def sizes(x):
    n, c = x.shape
    half = n // 2
    return x.view(half, 2 * c), n * c

# SIZES:      symbols { n: [2, 64] }
# SIZES-NEXT: relations {
# SIZES:      %[[V:[0-9]+]] = aten::view.default(%x, [n floordiv 2, 6])
# SIZES-NEXT: return (%[[V]], 3*n)


def no_grad_block(x):
    w = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        y = x * w
    return y + 1

# NOGRAD: aten::mul.Tensor(%x, %{{[0-9]+}}) : tensor<f32, [6, 3]>{{( loc\(.*\))?$}}
# NOGRAD-NEXT: aten::add.Tensor


class Gated(nn.Linear):
    def forward(self, x):
        return super().forward(x).sigmoid()

# SUPER:      graph @Gated.forward(%x: tensor<f32, [6, 3]> = L['x'],
# SUPER-NEXT: %self_weight: {{.*}} = L['self']._parameters['weight'],
# SUPER-NEXT: %self_bias: {{.*}} = L['self']._parameters['bias']) {
# SUPER:      aten::addmm.default
# SUPER:      aten::sigmoid.default


def example_inputs():
    return (torch.randn(6, 3),)
