# constant_pad_nd with a symbolic pad is laid out as ATen's CPU kernel lays
# it out: with no positive pad the kernel clones its input, keeping a dense
# input's strides, where torch's fake constant_pad_nd allocates in the
# suggested memory format. At batch 1 the permuted [1, s, 4, 16] view is
# dense, so the two differ, and whether the pad is 0 is a guard: the graph
# for b = 1 captured at s = 8 keeps the input's strides and serves the
# lengths that need no pad, those captured at s = 2 and s = 5 the others.
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %dync export %s:chunks -o %t/chunks.dync.so --dynamic 'y:0=b[1,8]' --dynamic 'y:2=s[1,32]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=NOTES
# RUN: %dync inspect %t/chunks.dync.so | FileCheck %s
import torch
from torch.nn import functional as F


def chunks(y):
    b, _, s = y.shape
    h = torch.relu(y).transpose(1, 2)[..., :64].reshape(b, s, 4, 16)
    pad = (4 - s % 4) % 4
    p = F.pad(h, (0, 0, 0, 0, 0, pad, 0, 0))
    c = p.reshape(b, -1, 4, 4, 16).permute(0, 3, 1, 2, 4)
    return c * 2, p


def example_inputs():
    return (torch.randn(2, 80, 8),)


# NOTES: the graph assumes 3*(s mod 4) mod 4 != 0 by torch._C._nn.pad at dynamic-pad-layout.py:21; adding a graph for b = 1, s = 4
# NOTES: dync: note: chunks: no graph made so far serves b = 1, s = 5 of the declared ranges; adding a graph for it
# NOTES-NOT: warning
# The general graph: a batch of 2 or more makes the input channels-last-like, as both layouts agree.
# CHECK: graph @chunks(%y: tensor<f32, [b, 80, s]> = L['y'])
# CHECK-NOT: mod 4) mod 4 == 0,
# CHECK: aten::constant_pad_nd.default(%3, [0, 0, 0, 0, 0, 3*(s mod 4) mod 4, 0, 0], 0.0) : tensor<f32, [b, s + 3*(s mod 4) mod 4, 4, 16], [64*s + 64*(3*(s mod 4) mod 4), 1, 16*s + 16*(3*(s mod 4) mod 4), s + 3*(s mod 4) mod 4]>
# CHECK: graph @chunks$b_1(%y: tensor<f32, [1, 80, s]> = L['y'])
# CHECK-NEXT: symbols { s: [2, 32] }
# CHECK-NEXT: relations { 3*(s mod 4) mod 4 == 0,
# CHECK: aten::constant_pad_nd.default(%3, [0, 0, 0, 0, 0, 3*(s mod 4) mod 4, 0, 0], 0.0) : tensor<f32, [1, s + 3*(s mod 4) mod 4, 4, 16], [s, 1, 16*s, s]>
# CHECK: graph @chunks$b_1$s_2(%y: tensor<f32, [1, 80, s]> = L['y'])
# CHECK-NEXT: symbols { s: [2, 32] }
# CHECK-NEXT: relations { 3*(s mod 4) mod 4 != 0,
# CHECK: aten::constant_pad_nd.default(%3, [0, 0, 0, 0, 0, 3*(s mod 4) mod 4, 0, 0], 0.0) : tensor<f32, [1, s + 3*(s mod 4) mod 4, 4, 16]> loc
