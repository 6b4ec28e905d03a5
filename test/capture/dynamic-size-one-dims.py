# A dynamic input's static dimension of size 1 has the stride torch gives it
# at every size, written with the symbols ([7, 1, s, 5] contiguous: 5*s),
# not the example's number (35). With the number, the guard refused every
# size but the example's ("stride(1) is not 35"), and torch's layout checks
# of a permuted result (channels-last or not, asked when its fake tensor
# cache describes the result) compared it with symbolic strides: advanced
# indexing of `x.permute(...)` recorded `h*w == 36` and cut the ranges at
# 4 and 7, so the artifact refused sizes it could serve.
# RUN: %dync export %s:scaled --dynamic 'x:2=s[1,16]' --emit=guards | FileCheck %s --check-prefix=GUARD
# RUN: rm -rf %t && mkdir -p %t
# RUN: %dync export %s:gathered -o %t/g.dync.so --dynamic 'x:2=h[1,16]' \
# RUN:   --dynamic 'x:3=w[1,16]' --example gathered=example_gathered 2>&1 \
# RUN:   | FileCheck %s --check-prefix=NOTES
# RUN: %dync inspect %t/g.dync.so | FileCheck %s
import torch


def scaled(x):
    return x * 2


def gathered(x, i):
    return x.permute(3, 2, 1, 0)[i, 0]


def example_inputs():
    return (torch.randn(7, 1, 7, 5),)


def example_gathered():
    return (torch.randn(12, 1, 6, 6), torch.zeros(1, 3, dtype=torch.long))

# GUARD: tensor L['x'] : tensor<f32, [7, 1, s, 5]>{{$}}

# NOTES-NOT: cuts the range
# NOTES-NOT: assumes
# NOTES: the graph for h = 1 is the general graph there; one graph serves h in [1, 16]
# NOTES: the graph for w = 1 is the general graph there; one graph serves w in [1, 16]

# CHECK:     graph @gathered(%x: tensor<f32, [12, 1, h, w]> = L['x'],
# CHECK:         symbols { h: [1, 16], w: [1, 16] } {
# CHECK-NOT: relations
# CHECK-NOT: graph @
