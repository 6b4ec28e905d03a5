# Dynamic sizes reach the kernels as arguments: one kernel, compiled once,
# serves every size of the declared ranges. The graph function fills an
# array of the symbols' values from the inputs' sizes at each call and
# passes it to the kernel, whose reduction over `m` reads its trip count
# from that array; the rows (`n`) are split into [begin, end) chunks by the
# caller. No code in the artifact is specific to a size.
# RUN: %dync export %s:f --emit=llvm --no-cache --dynamic 'x:0=n[2,64]' --dynamic 'x:1=m[2,64]' \
# RUN:   | FileCheck %s
import torch


def f(x):
    return torch.relu(x * 2 + 1).sum(1)


def example_inputs():
    return (torch.randn(8, 5),)

# CHECK: define internal i32 @graph.0.0.f(
# CHECK-NOT: define
# CHECK: %symbols.{{[0-9]+}} = alloca i64, i64 2
# CHECK: define void @dync_kernel_[[K:[0-9a-f]+]](ptr noalias nocapture readonly %buffers, ptr noalias nocapture readonly %symbols, i64 %begin, i64 %end)
# CHECK-NEXT: entry:
# m, the second symbol, is read from the array: the loop over it is not unrolled to the example's 5.
# CHECK: getelementptr inbounds i8, ptr %symbols, i64 8
# CHECK-NOT: define void @dync_kernel_
