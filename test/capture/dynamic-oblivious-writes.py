# Sizes torch specializes, proved size-oblivious where the graph writes in
# place: at b = 1 the transposed tensor needs no copy before `contiguous()`,
# and the general graph's copy may be left out there when no write can tell
# the copy from the tensor itself. `filled` writes only into a buffer it
# made (`copy_` into `new_empty`), so one graph serves [1, 16]; `written`
# adds to the tensor after copying it, which the copy does not see and a
# view would, so its graph for b = 1 stays apart.
# RUN: rm -rf %t && mkdir -p %t
# RUN: %dync export %s:filled %s:written -O0 -o %t/m.dync.so \
# RUN:   --dynamic 'x:0=b[1,16]' 2>&1 | FileCheck %s --check-prefix=NOTES
# RUN: %dync inspect %t/m.dync.so | FileCheck %s --check-prefix=GRAPHS
import torch


def filled(x):
    buffer = x.new_empty(x.shape)
    buffer.copy_(x * 2)
    t = (buffer + 1).t().contiguous()
    return t.view(-1).softmax(0)


def written(x):
    h = x * 2
    t = h.t().contiguous()
    h.add_(1)
    return t.view(-1).softmax(0), h


def example_inputs():
    return (torch.randn(4, 8),)

# NOTES: dync: note: filled: --dynamic 'x:0=b[1,16]': the graph for b = 1 is the general graph there; one graph serves b in [1, 16]
# NOTES: dync: note: written: --dynamic 'x:0=b[1,16]': the graph for b = 1 stays apart: it computes `%2 = aten::add_.Tensor(%0, 1) : tensor<f32, [1, 8]>` where the general graph computes `%2 = aten::clone.default(%1, memory_format=contiguous_format) : tensor<f32, [8, 1]>` at {{.*}}dynamic-oblivious-writes.py:25:5

# GRAPHS: graph @filled(%x: tensor<f32, [b, 8]> = L['x'])
# GRAPHS-NEXT: symbols { b: [1, 16] }
# GRAPHS-NOT: graph @filled$b_1
# GRAPHS: graph @written(%x: tensor<f32, [b, 8]> = L['x'])
# GRAPHS-NEXT: symbols { b: [2, 16] }
# GRAPHS: graph @written$b_1(%x: tensor<f32, [1, 8]> = L['x'])
