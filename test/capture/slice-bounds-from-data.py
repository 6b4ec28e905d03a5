# A tensor bounding a slice (`h[i, :length]`, `length` an item of a tensor of
# lengths, as x-vector statistics pooling slices each utterance's valid
# frames) is read as its `__index__` gives it: an int item() reads, over an
# unbacked symbol, and the slice's size is a symbol of its own in the range
# torch gives it, as torch.export slices. Tensor.__index__ itself would ask
# for the value, which capture does not have. A float tensor is no index:
# CPython's TypeError, at the user's line.
# RUN: %dync export %s:pooled --emit=graph | FileCheck %s
# RUN: not %dync export %s:float_bound --emit=graph 2>&1 | FileCheck %s --check-prefix=FLOAT
import torch


def pooled(h, lengths):
    means = []
    for i, length in enumerate(lengths):
        means.append(h[i, 1:length].mean(dim=0))
    return torch.stack(means)

# CHECK-LABEL: graph @pooled(
# CHECK:       symbols { u0: {{.*}} unbacked, u1: [0, 6] unbacked
# CHECK:       aten::_local_scalar_dense.default({{.*}}) : int<u0>
# CHECK:       aten::slice.Tensor({{.*}}, 0, 1, u0) : tensor<f32, [u1, 3]>
# CHECK:       aten::mean.dim
# CHECK:       return


def float_bound(h, lengths):
    return h[0, : lengths[0].float()]

# FLOAT: slice-bounds-from-data.py:{{[0-9]+}}:{{[0-9]+}}: error: {{.*}}only integer tensors of a single element can be converted to an index
# FLOAT-NEXT: return h[0, : lengths[0].float()]


def example_inputs():
    return torch.randn(2, 6, 3), torch.tensor([6, 4])
