# Sizes torch specializes, proved size-oblivious: torch captures a declared
# size 1 apart, and export compares that graph with the general one with the
# symbol set to 1. `same` broadcasts, checks contiguity (at 1 the transposed
# tensor needs no copy before its view), expands and reshapes: one program,
# so one graph serves [1, 16]. `squeezed` drops the dimension only at 1, and
# `branch` asks for 1: those keep their graph for b = 1, and the note names
# the difference and its line.
# RUN: rm -rf %t && mkdir -p %t
# RUN: %dync export %s:same %s:squeezed %s:branch -O0 -o %t/m.dync.so \
# RUN:   --dynamic 'x:0=b[1,16]' 2>&1 | FileCheck %s --check-prefix=NOTES
# RUN: %dync inspect %t/m.dync.so | FileCheck %s --check-prefix=GRAPHS
# --strict-dynamic accepts a size 1 the general graph is proved to serve.
# RUN: %dync export %s:same -O0 --strict-dynamic -o %t/strict.dync.so --dynamic 'x:0=b[1,16]'
import torch

torch.manual_seed(0)
bias = torch.randn(1, 8)
weight = torch.randn(8, 8)


def same(x):
    h = torch.relu(x @ weight + bias)
    t = h.t().contiguous()
    e = h[:, None, :].expand(-1, 3, -1)
    heads = h.view(h.shape[0], 2, 4).transpose(0, 1).reshape(2, -1)
    return e.reshape(e.shape[0], -1).softmax(-1), t.sum(1), heads


def squeezed(x):
    return x.squeeze(0) * 2


def branch(x):
    if x.shape[0] == 1:
        return x * 3
    return x * 2


def example_inputs():
    return (torch.randn(4, 8),)

# NOTES: dync: note: same: --dynamic 'x:0=b[1,16]': torch specializes sizes 0 and 1, so the graph for b serves b >= 2; adding a graph for b = 1
# NOTES-NEXT: dync: note: same: --dynamic 'x:0=b[1,16]': the graph for b = 1 is the general graph there; one graph serves b in [1, 16]
# NOTES: dync: note: squeezed: --dynamic 'x:0=b[1,16]': the graph for b = 1 stays apart: it computes `%0 = aten::squeeze.dims(%x, [0]) : tensor<f32, [8]>` where the general graph computes `%0 = aten::squeeze.dims(%x, [0]) : tensor<f32, [1, 8]>` at {{.*}}dynamic-oblivious.py:30:12
# NOTES: dync: note: branch: --dynamic 'x:0=b[1,16]': the graph for b = 1 stays apart: it computes `%0 = aten::mul.Tensor(%x, 3) : tensor<f32, [1, 8]>` where the general graph computes `%0 = aten::mul.Tensor(%x, 2) : tensor<f32, [1, 8]>` at {{.*}}dynamic-oblivious.py:35:16

# GRAPHS: graph @same(%x: tensor<f32, [b, 8]> = L['x'],
# GRAPHS: symbols { b: [1, 16] }
# GRAPHS-NOT: graph @same$b_1
# GRAPHS: graph @squeezed(%x: tensor<f32, [b, 8]> = L['x'])
# GRAPHS-NEXT: symbols { b: [2, 16] }
# GRAPHS: graph @squeezed$b_1(%x: tensor<f32, [1, 8]> = L['x'])
# GRAPHS: graph @branch(%x: tensor<f32, [b, 8]> = L['x'])
# GRAPHS-NEXT: symbols { b: [2, 16] }
# GRAPHS: graph @branch$b_1(%x: tensor<f32, [1, 8]> = L['x'])
