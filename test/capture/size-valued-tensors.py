# A 0-d integer tensor made from a symbolic size (`torch.tensor(min(q, 16))`,
# DeBERTa's attention span) holds a known function of the sizes, and so does
# Python's arithmetic on it with ints. Where the program reads such a value
# back as a number (a slice bound, item(), int()), capture takes the size
# expression itself: the slice is sized `2*min(s, 16)` at every size, no
# value is read from data, and no size is specialized. A tensor written in
# place (`add_`) no longer holds the value its making gave it: it is read as
# data, as any tensor is.
# RUN: %dync export %s:Span.forward --dynamic 'x:1=s[1,32]' --emit=graph \
# RUN:   | FileCheck %s --check-prefix=SPAN
# RUN: %dync export %s:reads --dynamic 'x:1=s[1,32]' --emit=graph | FileCheck %s --check-prefix=READS
# RUN: %dync export %s:in_place --dynamic 'x:1=s[1,32]' --emit=graph \
# RUN:   | FileCheck %s --check-prefix=INPLACE
# RUN: %dync export %s:written --dynamic 'x:1=s[1,32]' --emit=graph --data-branches=refuse \
# RUN:   | FileCheck %s --check-prefix=WRITTEN
import torch


class Span(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rel = torch.nn.Parameter(torch.randn(32, 4))

    def forward(self, x):
        span = torch.tensor(min(x.size(1), 16))
        return self.rel[16 - span : 16 + span, :].sum(0) * span


model = Span()

# SPAN-LABEL: graph @Span.forward
# SPAN: symbols { s: [2, 32] }
# SPAN-NOT: relations
# SPAN: aten::scalar_tensor.default(min(s, 16), dtype=i64,
# SPAN-NOT: _local_scalar_dense
# SPAN: aten::slice.Tensor(%self_rel, 0, -min(s, 16) + 16, min(s, 16) + 16) : tensor<f32, [2*min(s, 16), 4]>
# SPAN-NOT: _local_scalar_dense


def reads(x):
    width = torch.tensor(x.size(1)) * 2 - 1
    return x.new_zeros(width.item(), int(width) // 3) + 1


# READS-LABEL: graph @reads
# READS-NOT: _local_scalar_dense
# READS: aten::full.default([2*s - 1, (2*s - 1) floordiv 3], 0,


def in_place(x):
    width = torch.tensor(x.size(1))
    width += 2
    return x[:, : width - 3]


# INPLACE-LABEL: graph @in_place
# INPLACE-NOT: _local_scalar_dense
# INPLACE: aten::slice.Tensor(%x, 1, 0, s - 1) : tensor<f32, [2, s - 1], [s, 1]>


def written(x):
    width = torch.tensor(x.size(1))
    width.add_(2)
    return x[:, :width]


# The bound is read from data, and the slice gets a size of its own.
# WRITTEN-LABEL: graph @written
# WRITTEN: aten::add_.Tensor(%[[W:[0-9]+]], 2)
# WRITTEN: aten::_local_scalar_dense.default(%{{[0-9]+}}) : int<[[U:u[0-9]+]]>
# WRITTEN: aten::slice.Tensor(%x, 1, 0, [[U]]) : tensor<f32, [2, [[N:u[0-9]+]]], [s, 1]>
# WRITTEN: return


def example_inputs():
    return (torch.randn(2, 8),)
