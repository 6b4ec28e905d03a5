# Calls of a structured kernel's functional operator (`addmm`, `sum`,
# `mean`, `add`, `pow`, `mul` of an integer tensor by a float, `le`, `tanh`,
# `rsqrt`, `sub`), whose Meta kernel torch shadows with Python code, take
# ATen's direct Meta function (at::meta::<op>) without fake mode's
# dispatch (`addmm` in the trial of its fusion decomposition, which runs in
# the call); the graph is the one fake mode's path gives, and checking mode,
# which runs both paths, finds no difference.
# RUN: env DYNC_ORACLE_CACHE=off DYNC_ORACLE_META_KERNELS=off %dync export %s:Head.forward --emit=graph > %t.off
# RUN: env DYNC_ORACLE_CACHE=off DYNC_ORACLE_PROFILE=%t.profile %dync export %s:Head.forward --emit=graph 2> %t.err | diff - %t.off
# RUN: FileCheck %s --check-prefix=COUNTS < %t.err
# RUN: env DYNC_ORACLE_CACHE=off DYNC_ORACLE_META_KERNELS=check %dync export %s:Head.forward --emit=graph 2> %t.check | diff - %t.off
# RUN: FileCheck %s --check-prefix=CHECK-MODE --allow-empty < %t.check
# RUN: FileCheck %s < %t.off
# A Meta function that refuses its arguments (`mm` of sizes that do not
# match) leaves the call to fake mode, whose error the user sees as before.
# RUN: env DYNC_ORACLE_CACHE=off DYNC_ORACLE_META_KERNELS=off not %dync export %s:Mismatch.forward --emit=graph 2> %t.bad-off
# RUN: env DYNC_ORACLE_CACHE=off not %dync export %s:Mismatch.forward --emit=graph 2> %t.bad-on
# RUN: diff %t.bad-off %t.bad-on
# RUN: FileCheck %s --check-prefix=ERROR < %t.bad-on
import torch


class Head(torch.nn.Module):
    def forward(self, x, w, b, n):
        h = torch.addmm(b, x, w.t(), beta=0.5, alpha=2)
        s = h.sum(dim=1, keepdim=True, dtype=torch.float64)
        m = h.mean(dim=0)
        p = torch.add(h, m, alpha=3).pow(2)
        q = n * 2.5
        return p.le(s), q, torch.tanh(p).rsqrt() - m


class Mismatch(torch.nn.Module):
    def forward(self, x, w, b, n):
        return torch.mm(x, w)


def example_inputs():
    return (torch.randn(3, 4), torch.randn(5, 4), torch.randn(5), torch.arange(6).view(2, 3))

# COUNTS: Meta kernels without fake mode's dispatch: 15 calls (1 C++, 14 ATen's Meta functions, 0 as fake mode's Meta branch), {{[0-9.]+}} ms; fake mode: 0 calls, {{[0-9.]+}} ms
# COUNTS-DAG: aten.mm.default (ATen's Meta function) 1 calls
# COUNTS-DAG: aten.addmm.default (ATen's Meta function) 1 calls
# COUNTS-DAG: aten.mul.Tensor (ATen's Meta function) 3 calls

# CHECK-MODE-NOT: DYNC_ORACLE_META_KERNELS=check

# CHECK: aten::permute.default(%w, [1, 0]) : tensor<f32, [4, 5], [1, 4]>
# CHECK: aten::addmm.default(%b, %x, %0, beta=0.5, alpha=2) : tensor<f32, [3, 5]>
# CHECK: aten::sum.dim_IntList(%1, [1], true, dtype=f64) : tensor<f64, [3, 1]>
# CHECK: aten::mean.dim(%1, [0]) : tensor<f32, [5]>
# CHECK: aten::add.Tensor(%1, %3, alpha=3) : tensor<f32, [3, 5]>
# CHECK: aten::pow.Tensor_Scalar(%4, 2) : tensor<f32, [3, 5]>
# CHECK: aten::mul.Tensor(%n, 2.5) : tensor<f32, [2, 3]>
# CHECK: aten::le.Tensor(%5, %2) : tensor<bool, [3, 5]>
# CHECK: aten::tanh.default(%5) : tensor<f32, [3, 5]>
# CHECK: aten::rsqrt.default(%8) : tensor<f32, [3, 5]>
# CHECK: aten::sub.Tensor(%9, %3) : tensor<f32, [3, 5]>

# ERROR: aten-meta-functions.py:{{[0-9]+}}
