# torch.tensor of a size that --dynamic declares symbolic (DeBERTa's
# attention span, `torch.tensor(min(max(q, k), 16))`) is made in the graph
# from the size, as torch.export makes it, rather than specialized to the
# example's size, which contradicts the declared range. Python's min and max
# of sizes are torch.sym_min and sym_max, a symbolic bound rather than a
# guard on which size is smaller. A list of sizes is stacked.
# RUN: %dync export %s:span --dynamic 'x:1=s[1,32]' --emit=graph | FileCheck %s --check-prefix=SPAN
# RUN: %dync export %s:sizes --dynamic 'x:0=b[1,8]' --dynamic 'x:1=s[1,32]' --emit=graph \
# RUN:   | FileCheck %s --check-prefix=SIZES
# RUN: %dync export %s:head --dynamic 'x:1=s[1,32]' --emit=graph | FileCheck %s --check-prefix=HEAD
import torch


def span(x):
    return x * torch.tensor(min(max(x.size(1), x.size(1)), 16))


# SPAN-LABEL: graph @span
# SPAN: symbols { s: [2, 32] }
# SPAN-NEXT: = aten::scalar_tensor.default(min(s, 16), dtype=i64, {{.*}}) : tensor<i64, []>
# SPAN-NOT: aten::scalar_tensor
# SPAN: aten::mul.Tensor(%x,


def sizes(x):
    shape = torch.as_tensor([x.shape[0], x.shape[1] + 1, 3], dtype=torch.float32)
    return x.sum() * shape


# SIZES-LABEL: graph @sizes
# SIZES: aten::scalar_tensor.default(b, dtype=f32,
# SIZES: aten::scalar_tensor.default(s + 1, dtype=f32,
# SIZES: aten::scalar_tensor.default(3, dtype=f32,
# SIZES: aten::cat.default({{.*}}) : tensor<f32, [3]>


def head(x):
    return x[:, : min(x.size(1), 4)] * 2


# HEAD-LABEL: graph @head
# HEAD: aten::slice.Tensor(%x, 1, 0, min(s, 4)) : tensor<f32, [2, min(s, 4)]


def example_inputs():
    return (torch.randn(2, 8),)
