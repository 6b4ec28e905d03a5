# `w.data *= mask` writes into the alias `.data` gives and assigns it back:
# the in-place call is a node on an alias of the parameter, and the
# assignment, which gives the tensor its own memory again, records nothing.
# Assigning `.data` another tensor (a new storage) stops capture at its line.
# RUN: %dync export %s:Masked.forward --emit=graph 2>&1 | FileCheck %s
# RUN: not %dync export %s:Masked.swap --emit=graph 2>&1 | FileCheck %s --check-prefix=SWAP
# RUN: not %dync export %s:Masked.transposed --emit=graph 2>&1 | FileCheck %s --check-prefix=VIEW
import torch
from torch import nn


class Masked(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(3, 3))
        self.register_buffer("mask", torch.tril(torch.ones(3, 3)))

    def forward(self, x):
        self.weight.data *= self.mask
        return x @ self.weight

    def swap(self, x):
        self.weight.data = self.weight.data * 0.5
        return x @ self.weight

    def transposed(self, x):
        self.weight.data = self.weight.data.t()
        return x @ self.weight


model = Masked()


def example_inputs():
    return torch.randn(2, 3)

# CHECK: %[[ALIAS:[0-9]+]] = aten::alias.default(%self_weight) {{.*}}tensor-data-assignment.py":[[@LINE-18]]:9)
# CHECK-NEXT: aten::mul_.Tensor(%[[ALIAS]], %self_mask)
# CHECK-NEXT: aten::mm.default(%x, %self_weight)
# CHECK-NOT: after
# SWAP: tensor-data-assignment.py:[[@LINE-18]]:9: error: assigning attribute 'data' of L['self']._parameters['weight'] to another tensor (it swaps the tensor's storage, a side effect outside the graph) is not supported yet; write the new values into it in place instead (`with torch.no_grad(): t.copy_(new)`)
# VIEW: tensor-data-assignment.py:[[@LINE-15]]:9: error: assigning attribute 'data' of L['self']._parameters['weight'] to another tensor
