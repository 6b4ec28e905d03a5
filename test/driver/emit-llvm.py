# --emit=llvm prints the artifact's LLVM IR after optimization, each module
# after a line naming it: the main one (descriptor, init, guards, graph
# functions) first. It needs no -o and writes nothing.
# RUN: %dync export %s:f --emit=llvm --no-cache | FileCheck %s
# RUN: %dync export %s:f --emit=llvm --no-cache -O0 | FileCheck %s --check-prefix=O0
# RUN: %dync export %s:f --emit=llvm --no-cache --target-cpu sapphirerapids \
# RUN:   | FileCheck %s --check-prefix=SPR
# RUN: not %dync export %s:f --emit=llvm --target-cpu skylake-avx51 2>&1 \
# RUN:   | FileCheck %s --check-prefix=BADCPU
# RUN: not %dync export %s:f --emit=llvm -O 2 2>&1 | FileCheck %s --check-prefix=BADOPT
# RUN: not %dync export %s:f --emit=graph --target-cpu znver4 2>&1 \
# RUN:   | FileCheck %s --check-prefix=NOCODE
import torch


def f(x, y):
    return torch.relu(x + y)


def example_inputs():
    return (torch.randn(4, 8), torch.randn(8))

# CHECK: ; dync module: main
# CHECK: ; ModuleID = 'dync.artifact'
# CHECK: target triple = "x86_64
# CHECK: c"{{.*}}target_cpu {{[a-z0-9-]+}}\0Acpu_features {{.*}}sse2
# CHECK: define internal i32 @graph.0.0.f(
# CHECK: call i32 %api.parallel_for({{.*}}ptr @dync.trampoline.[[KERNEL:dync_kernel_[0-9a-f]+]],
# CHECK: define internal i32 @guard.0(
# CHECK: define {{.*}}ptr @dync_artifact_get_descriptor()

# add and relu are fused into one kernel, in a module of its own, vectorized.
# CHECK: ; dync module: kernel @k0 ([[KERNEL]])
# CHECK: define void @[[KERNEL]](ptr noalias
# CHECK: fadd <{{[0-9]+}} x float>

# -O0: each node is one call into ATen, and there is no kernel.
# O0: define internal i32 @graph.0.0.f(
# O0: load ptr, ptr @"op.aten::add.Tensor"
# O0: load ptr, ptr @"op.aten::relu.default"
# O0-NOT: ; dync module: kernel

# The recorded features are the named CPU's, not this machine's.
# SPR: c"{{.*}}target_cpu sapphirerapids\0Acpu_features {{.*}}avx512fp16{{.*}}amx-tile,amx-int8,amx-bf16\0A

# BADCPU: dync: error: unknown CPU 'skylake-avx51' for x86_64{{.*}}; did you mean 'skylake-avx512'?

# BADOPT: dync: error: -O: Value 2 not in range 0 to 1

# NOCODE: error: --target-cpu changes only the compiled code: give -o FILE.so or --emit=llvm
