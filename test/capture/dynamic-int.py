# A Python int argument declared dynamic (`--dynamic n=n[1,64]`) stays a
# symbol: the graph takes it as an int input and sizes a slice, a new tensor
# and a view with it; the `int` guard binds the symbol from the frame. A
# keyword-only int works the same way, and an int equal to a tensor's
# dimension is that dimension's symbol (a relation the guards check).
# RUN: %dync export %s:rows --dynamic 'n=n[1,64]' --emit=graph | FileCheck %s --check-prefix=GRAPH
# RUN: %dync export %s:rows --dynamic 'n=n[1,64]' --emit=guards | FileCheck %s --check-prefix=GUARDS
# RUN: %dync export %s:window --example window_inputs --dynamic 'size=s[2,16]' --emit=graph \
# RUN:   | FileCheck %s --check-prefix=KEYWORD
# RUN: %dync export %s:same --example same_inputs --dynamic 'x:0=b[2,64]' --dynamic 'n=n[2,64]' \
# RUN:   --emit=guards | FileCheck %s --check-prefix=RELATION
# RUN: %dync export %s:same --example same_inputs --dynamic 'x:0=b[2,64]' --dynamic 'n=b[2,64]' \
# RUN:   --emit=guards | FileCheck %s --check-prefix=SHARED
import torch


def rows(x, n):
    head = x[:n]
    weights = torch.arange(n, dtype=torch.float32)
    return head * weights.unsqueeze(1), head.reshape(n * 2, -1), n + 1


def example_inputs():
    return (torch.randn(64, 8), 5)


def window(x, *, size):
    return x[:size].sum(0) + torch.zeros(size, 1)


def window_inputs():
    return (torch.randn(16, 6),)


def window_kwargs():
    return {"size": 4}


def same(x, n):
    return x + torch.ones(n, 1)


def same_inputs():
    return (torch.randn(6, 8), 6)

# GRAPH: graph @rows(%x: tensor<f32, [64, 8]> = L['x'],
# GRAPH-NEXT: %n: int<n> = L['n'])
# GRAPH-NEXT: symbols { n: [2, 64] } {
# GRAPH-NEXT: aten::slice.Tensor(%x, 0, 0, n) : tensor<f32, [n, 8]>
# GRAPH-NEXT: aten::arange.start_step(0, n, {{.*}}) : tensor<f32, [n]>
# GRAPH: aten::view.default(%0, [2*n, -1]) : tensor<f32, [2*n, 4]>
# GRAPH-NEXT: return (%4, %5, n + 1)

# GUARDS: guards @rows(x, n, head, weights) {
# GUARDS-NEXT: tensor L['x'] : tensor<f32, [64, 8]>
# GUARDS-NEXT: int L['n'] : n
# GUARDS-NOT: equals L['n']

# KEYWORD: graph @window(%x: tensor<f32, [16, 6]> = L['x'],
# KEYWORD-NEXT: %size: int<s> = L['size'])
# KEYWORD-NEXT: symbols { s: [2, 16] } {
# KEYWORD-NEXT: aten::slice.Tensor(%x, 0, 0, s) : tensor<f32, [s, 6]>
# KEYWORD: aten::full.default([s, 1], 0, {{.*}}) : tensor<f32, [s, 1]>
# KEYWORD: : tensor<f32, [s, 6]>

# RELATION: tensor L['x'] : tensor<f32, [b, 8]>
# RELATION-NEXT: int L['n'] : b
# SHARED: tensor L['x'] : tensor<f32, [b, 8]>
# SHARED-NEXT: int L['n'] : b
