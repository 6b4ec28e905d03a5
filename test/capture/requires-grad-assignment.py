# `p.requires_grad = flag` on a tensor runs torch's own setter through the
# oracle, which records the flag it changed as requires_grad_() does (a GAN
# step freezing its critic: WassersteinGAN's
# `for p in netD.parameters(): p.requires_grad = False`). Assigning a flag a
# tensor already has records nothing; what the setter refuses (a tensor that
# is not a leaf) is the program's error at its line.
# RUN: %dync export %s:Critic.forward --emit=graph 2>&1 | FileCheck %s
# RUN: not %dync export %s:not_a_leaf --example leaf_inputs --emit=graph 2>&1 | FileCheck %s --check-prefix=LEAF
import torch
from torch import nn


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 1)

    def forward(self, x):
        for p in self.lin.parameters():
            p.requires_grad = True
        real = self.lin(x).mean()
        for p in self.lin.parameters():
            p.requires_grad = False
        return real, self.lin(x * 2).mean()


model = Critic()
for _p in model.parameters():
    _p.requires_grad = False


def example_inputs():
    return torch.randn(4, 3)


def not_a_leaf(x):
    y = x * 2
    y.requires_grad = False
    return y


def leaf_inputs():
    return torch.randn(2, requires_grad=True)

# CHECK: graph @Critic.forward
# CHECK: aten::requires_grad_.default(%self_lin_weight, true) {{.*}}requires-grad-assignment.py":[[@LINE-26]]:13)
# CHECK: aten::requires_grad_.default(%self_lin_bias, true)
# CHECK: aten::requires_grad_.default(%0, false) {{.*}}requires-grad-assignment.py":[[@LINE-25]]:13)
# CHECK: aten::requires_grad_.default(%1, false)
# LEAF: requires-grad-assignment.py:[[@LINE-12]]:5: error: calling setattr with the example's sizes raised RuntimeError: you can only change requires_grad flags of leaf variables
