# The oracle gives an operator's result the layout its CPU kernel gives
# (it runs the kernel once on zeros laid out like the arguments), by a copy
# in the graph, except where that layout has elements sharing memory, which
# no copy can fill: dropout in eval mode returns its expanded argument
# itself, strides [8, 0, 1]. The result keeps torch's decomposition's
# layout (a contiguous clone), and capture goes on.
# RUN: %dync export %s:f -O0 --emit=graph | FileCheck %s
import torch
import torch.nn.functional as F


def f(x):
    e = x[:, None, :].expand(-1, 3, -1)
    return F.dropout(e, 0.1, training=False)


def example_inputs():
    return (torch.randn(4, 8),)

# CHECK: %[[E:[0-9]+]] = aten::expand.default({{.*}} : tensor<f32, [4, 3, 8], [8, 0, 1]>
# CHECK-NEXT: aten::clone.default(%[[E]]) : tensor<f32, [4, 3, 8]>
# CHECK-NOT: aten::copy_
# CHECK: return
