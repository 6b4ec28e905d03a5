# F.interpolate with a scale_factor on a symbolic size: torch computes the
# output size as float arithmetic on the size (`TruncToInt(2.0 *
# ToFloat(w))`) and nearest's decomposition a float scale from it
# (`w / (2.0 * w)`). Where double arithmetic on those values is exact (a
# dyadic scale with small terms: 2.0, 0.5, 1.5) they are the integer size
# `2*w` (`(3*w) floordiv 2`) and the constant 0.5; a scale such as 0.7, whose
# products with sizes round, and a float computed from symbolic sizes are
# refused in plain words. A size computed from tensor data (detectron2's
# ImageList padding to a stride) takes the same path.
# RUN: %dync export %s:nearest --dynamic 'x:3=w[2,64]' --emit=graph | FileCheck %s --check-prefix=NEAREST
# RUN: %dync export %s:bilinear_half --dynamic 'x:3=w[2,64]' --emit=graph | FileCheck %s --check-prefix=HALF
# RUN: %dync export %s:padded_to_stride --emit=graph | FileCheck %s --check-prefix=PADDED
# RUN: not %dync export %s:inexact --dynamic 'x:3=w[2,64]' --emit=graph 2>&1 | FileCheck %s --check-prefix=INEXACT
# RUN: not %dync export %s:size_float --dynamic 'x:3=w[2,64]' --emit=graph 2>&1 | FileCheck %s --check-prefix=SIZEFLOAT
import torch
import torch.nn.functional as F


def nearest(x):
    return F.interpolate(x, scale_factor=2.0, mode="nearest")

# NEAREST:      graph @nearest(%x: tensor<f32, [2, 3, 6, w]> = L['x'])
# NEAREST:      aten::arange.start_step(0, 2*w, dtype=f32
# NEAREST:      aten::mul.Tensor(%{{[0-9]+}}, 0.5) : tensor<f32, [2*w]>
# NEAREST:      aten::index.Tensor(%x, {{.*}}) : tensor<f32, [2, 3, 12, 2*w]>


def bilinear_half(x):
    return F.interpolate(x, scale_factor=1.5, mode="bilinear", align_corners=False)

# HALF:         graph @bilinear_half(
# HALF:         return %{{[0-9]+}}
# HALF-SAME:    {{.*}}
# HALF-NOT:     error
# HALF:         }


def padded_to_stride(x):
    size = torch.stack([torch.as_tensor(x.shape[-1]), torch.as_tensor(x.shape[-2])]).max(0).values
    padded = (size + 7).div(8, rounding_mode="floor") * 8
    y = F.pad(x, [0, padded - x.shape[-1]])
    return F.interpolate(y, scale_factor=2.0, mode="nearest")

# PADDED:       graph @padded_to_stride(
# PADDED:       symbols { u0: {{.*}} unbacked }
# PADDED:       aten::arange.start_step(0, 2*u0 + 16, dtype=f32
# PADDED:       aten::mul.Tensor(%{{[0-9]+}}, 0.5)


def inexact(x):
    return F.interpolate(x, scale_factor=0.7, mode="nearest")

# INEXACT: interpolate-scale-sizes.py:[[@LINE-2]]:12: error: a size computed as TruncToInt(0.7*ToFloat(w)) has no form in the graph IR's symbolic integers (float arithmetic on a symbolic size, exact only for scales such as 2.0, 0.5 or 1.5, dyadic with small terms); keep that size static, or compute the size as an int and pass it (F.interpolate(x, size=...) rather than scale_factor=...)


def size_float(x):
    return x * (1.0 / x.shape[-1])

# SIZEFLOAT: interpolate-scale-sizes.py:[[@LINE-2]]:12: error: operator.mul (a * b) is given a float computed from symbolic sizes (FloatTrueDiv(1.0, ToFloat(w))); graphs have no floats computed from symbolic sizes yet, so it cannot be captured: keep those sizes static, or keep the value a tensor


def example_inputs():
    return (torch.randn(2, 3, 6, 8),)
