# Python's min and max of an int read from tensor data (detectron2's
# `max(num_pos.item(), 1)` loss normalizer) are torch.sym_min and sym_max,
# a symbolic bound, as torch.export reads them: no guard on which side of
# the constant the count lies, no specialization to the example's count,
# and the float made from it is stored on the module after the graph.
# RUN: %dync export %s:Normalized.forward --init 'Normalized()' --emit=graph 2>&1 | FileCheck %s
import torch
from torch import nn


class Normalized(nn.Module):
    def __init__(self):
        super().__init__()
        self.normalizer = 100.0

    def forward(self, x, labels):
        num_pos = (labels > 0).sum().item()
        self.normalizer = 0.9 * self.normalizer + 0.1 * max(num_pos, 1)
        return x.sum() / self.normalizer, x * max(1, num_pos, 2) / min(num_pos + 1, 3)


# CHECK-NOT: specialized
# CHECK-LABEL: graph @Normalized.forward
# CHECK: symbols { u0: [-inf, inf] unbacked }
# CHECK: %[[N:[0-9]+]] = aten::_local_scalar_dense.default(%{{[0-9]+}}) : int<u0>
# CHECK-NEXT: %[[S:[0-9]+]] = sym::mul.default(0.1, max(u0, 1)) : float
# CHECK-NEXT: %[[F:[0-9]+]] = sym::add.default(9e+01, %[[S]]) : float
# CHECK: aten::div.Tensor(%{{[0-9]+}}, %[[F]])
# CHECK: aten::mul.Tensor(%x, max(u0, 2))
# CHECK: aten::div.Tensor(%{{[0-9]+}}, min(u0 + 1, 3))
# CHECK-NOT: _assert_async
# CHECK: after set L['self'].normalizer = %[[F]]


def example_inputs():
    return torch.randn(4), torch.tensor([0, 1, 2, 3])
