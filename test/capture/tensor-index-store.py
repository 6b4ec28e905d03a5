# `t[i] = v` with `i` a 0-d integer tensor (SSD's prior matching writes
# `best_truth_idx[best_prior_idx[j]] = j` in a loop). Eager reads the index
# with item() and writes through a select; torch's setitem on fake tensors
# then needs the number itself. The write is recorded as index_put_ with
# the 0-d index, which writes the same elements (a negative index counted
# from the end) and checks the bound when the graph runs; the values are
# cast to the tensor's dtype, as copy_ casts them. No unbacked symbol is
# made. A bool index stays a mask, and a 1-d index tensor an index.
# RUN: %dync export %s:Store.forward --init "Store()" --emit=graph | FileCheck %s
import torch
from torch import nn


class Store(nn.Module):
    def forward(self, t, i, rows, idx, keep):
        t = t.clone()
        t[i] = rows
        t[i - 1] = 2.5
        matched = torch.zeros(6, dtype=torch.long)
        for j in range(idx.size(0)):
            matched[idx[j]] = j
        t[keep] = 0.0
        t[idx[:2]] = -1.0
        return t, matched

# CHECK-LABEL: graph @Store.forward(
# CHECK-NOT:   _local_scalar_dense
# CHECK:       %[[ROWS:[0-9]+]] = aten::_to_copy.default(%rows, dtype=f32)
# CHECK:       aten::index_put_.default(%{{[0-9]+}}, [%i], %[[ROWS]]) : tensor<f32, [4, 3]>
# CHECK:       %[[PREV:[0-9]+]] = aten::sub.Tensor(%i, 1)
# CHECK:       aten::full.default([], 2.5, dtype=f32
# CHECK:       aten::index_put_.default(%{{[0-9]+}}, [%[[PREV]]],
# CHECK:       %[[IDX0:[0-9]+]] = aten::select.int(%idx, 0, 0)
# CHECK:       aten::full.default([], 0, dtype=i64
# CHECK:       aten::index_put_.default(%{{[0-9]+}}, [%[[IDX0]]],
# CHECK:       aten::index_put_.default({{.*}}, [%keep],
# CHECK:       return


def example_inputs():
    return (torch.randn(4, 3), torch.tensor(-1), torch.tensor([1, 2, 3]), torch.tensor([3, 0, 4]),
            torch.tensor([True, False, False, True]))
