# Calls whose operator's Meta key runs ATen's C++ code (a view kernel, a
# composite kernel CPU shares) take their results from it, and `mul`, whose
# Meta kernel torch shadows with its Python reference, takes ATen's direct
# Meta function (test/capture/aten-meta-functions.py), both without fake
# mode's dispatch; the graph is the one fake mode's path gives.
# RUN: env DYNC_ORACLE_CACHE=off DYNC_ORACLE_META_KERNELS=off %dync export %s:Block.forward --emit=graph > %t.off
# RUN: env DYNC_ORACLE_CACHE=off DYNC_ORACLE_PROFILE=%t.profile %dync export %s:Block.forward --emit=graph 2> %t.err | diff - %t.off
# RUN: FileCheck %s --check-prefix=COUNTS < %t.err
# In checking mode both paths run and eager's CPU kernel decides where they
# differ: torch's fake `view` gives a size-1 dimension other strides than
# ATen's (which the recorder corrects, "Views' strides"), the C++ kernel
# gives ATen's.
# RUN: env DYNC_ORACLE_CACHE=off DYNC_ORACLE_META_KERNELS=check %dync export %s:Block.forward --emit=graph 2> %t.check | diff - %t.off
# RUN: FileCheck %s --check-prefix=CHECK-MODE < %t.check
# RUN: FileCheck %s < %t.off
import torch


class Block(torch.nn.Module):
    def forward(self, x):
        y = x.permute(1, 0, 2).view(1, 24)
        z = y.unsqueeze(0).expand(2, 1, 24)
        return z * 2, y


def example_inputs():
    return (torch.randn(4, 1, 6),)

# COUNTS: Meta kernels without fake mode's dispatch: 5 calls (4 C++, 1 ATen's Meta functions, 0 as fake mode's Meta branch), {{[0-9.]+}} ms; fake mode: 0 calls, {{[0-9.]+}} ms

# CHECK-MODE: DYNC_ORACLE_META_KERNELS=check: aten.view.default on {{.*}}: fake mode differs from eager's CPU kernel, the C++ Meta kernel agrees with it: result 0: ((1, 24), (24, 1), {{.*}}) and ((1, 24), (6, 1), {{.*}})
# CHECK-MODE-NOT: and fake mode's dispatch differ

# CHECK: aten::permute.default(%x, [1, 0, 2]) : tensor<f32, [1, 4, 6], [6, 6, 1]>
# CHECK: aten::view.default(%0, [1, 24]) : tensor<f32, [1, 24]>
# CHECK: aten::unsqueeze.default(%1, 0) : tensor<f32, [1, 1, 24]>
# CHECK: aten::expand.default(%2, [2, 1, 24]) : tensor<f32, [2, 1, 24], [0, 24, 1]>
# CHECK: aten::mul.Tensor(%3, 2)
