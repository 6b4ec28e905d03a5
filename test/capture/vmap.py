# torch.vmap runs the program's function once over batched fake tensors:
# functorch's batching rules turn each operator into one ATen call over the
# whole batch, which the graph holds (one mm for a Linear over every row,
# one bmm for a nested vmap of dot). in_dims with None broadcasts an
# argument; out_dims moves the batch dimension of each output; chunk_size
# runs the function per chunk and concatenates. A random operator under
# randomness='error' is refused with torch's own words, at the program's
# line. A dynamic batch size stays symbolic.
# RUN: %dync export %s:Rows.forward --emit=graph | FileCheck %s --check-prefix=ROWS
# RUN: %dync export %s:Rows.forward --dynamic 'x:0=n[2,64]' --emit=graph | FileCheck %s --check-prefix=DYNAMIC
# RUN: %dync export %s:broadcast --example broadcast=pair --emit=graph | FileCheck %s --check-prefix=BROADCAST
# RUN: %dync export %s:out_dims --emit=graph | FileCheck %s --check-prefix=OUTDIMS
# RUN: %dync export %s:nested --example nested=batches --emit=graph | FileCheck %s --check-prefix=NESTED
# RUN: %dync export %s:chunked --example chunked=five_rows --emit=graph | FileCheck %s --check-prefix=CHUNKED
# RUN: not %dync export %s:random_error --emit=graph 2>&1 | FileCheck %s --check-prefix=RANDOM
import torch
from torch import nn


class Rows(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 5)

    def forward(self, x):
        return torch.vmap(lambda row: self.lin(row).sin())(x)

# ROWS-LABEL: graph @Rows.forward(%x: tensor<f32, [4, 3]> = L['x'],
# ROWS:         %[[T:[0-9]+]] = aten::permute.default(%self_lin_weight, [1, 0])
# ROWS:         %[[X:[0-9]+]] = aten::view.default(%{{[0-9]+}}, [4, 3])
# ROWS-NEXT:    %{{[0-9]+}} = aten::mm.default(%[[X]], %[[T]]) : tensor<f32, [4, 5]>
# ROWS:         aten::add.Tensor(%{{[0-9]+}}, %self_lin_bias) : tensor<f32, [4, 5]>
# ROWS-NEXT:    %[[S:[0-9]+]] = aten::sin.default(%{{[0-9]+}}) : tensor<f32, [4, 5]>
# ROWS-NEXT:    return %[[S]]

# DYNAMIC:      symbols { n: [2, 64] }
# DYNAMIC:      aten::mm.default(%{{[0-9]+}}, %{{[0-9]+}}) : tensor<f32, [n, 5]>


def broadcast(x, w):
    return torch.func.vmap(torch.mul, in_dims=(0, None))(x, w)

# BROADCAST:      %0 = aten::mul.Tensor(%x, %w) : tensor<f32, [4, 3]>
# BROADCAST-NEXT: return %0


def out_dims(x):
    return torch.vmap(lambda row: (row.exp(), row.sum()), out_dims=(1, 0))(x)

# OUTDIMS:      %[[E:[0-9]+]] = aten::exp.default(%x) : tensor<f32, [4, 3]>
# OUTDIMS-NEXT: %[[S:[0-9]+]] = aten::sum.dim_IntList(%x, [1]) : tensor<f32, [4]>
# OUTDIMS-NEXT: %[[P:[0-9]+]] = aten::permute.default(%[[E]], [1, 0]) : tensor<f32, [3, 4], [1, 3]>
# OUTDIMS-NEXT: return (%[[P]], %[[S]])


def nested(a, b):
    return torch.vmap(torch.vmap(torch.dot))(a, b)

# NESTED:     aten::bmm.default(%{{[0-9]+}}, %{{[0-9]+}}) : tensor<f32, [8, 1, 1]>
# NESTED:     aten::squeeze.dims(%{{[0-9]+}}, [2]) : tensor<f32, [2, 4]>


def chunked(x, w):
    return torch.vmap(lambda row: row @ w, chunk_size=2)(x)

# CHUNKED:     aten::mm.default(%{{[0-9]+}}, %w) : tensor<f32, [2, 2]>
# CHUNKED:     aten::mm.default(%{{[0-9]+}}, %w) : tensor<f32, [2, 2]>
# CHUNKED:     aten::mm.default(%{{[0-9]+}}, %w) : tensor<f32, [1, 2]>
# CHUNKED:     aten::cat.default([%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}]) : tensor<f32, [5, 2]>


def random_error(x):
    return torch.vmap(lambda row: row + torch.rand(()))(x)

# RANDOM: vmap.py:[[@LINE-2]]:12: error: {{.*}}(RuntimeError: vmap: called random operation while in randomness error mode. Please either use the 'same' or 'different' randomness flags on vmap or perform the randomness operation out of vmap)


def example_inputs():
    return (torch.randn(4, 3),)


def pair():
    return (torch.randn(4, 3), torch.randn(3))


def batches():
    return (torch.randn(2, 4, 3), torch.randn(2, 4, 3))


def five_rows():
    return (torch.randn(5, 3), torch.randn(3, 2))
