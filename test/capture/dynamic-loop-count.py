# A loop whose trip count is computed from a declared size (a count of
# 8-row chunks after padding) unrolls at the example's count with that
# count guarded, a relation of the graph: export captures each other count
# apart, so one artifact serves the range. A bound that is the declared
# size itself pins it, which contradicts the declaration at the loop.
# RUN: rm -f %t.dync.so
# RUN: %dync export %s:chunks -o %t.dync.so --dynamic 'x:0=s[2,20]' 2>&1 | FileCheck %s --check-prefix=NOTES
# RUN: %dync inspect %t.dync.so | FileCheck %s
# RUN: not %dync export %s:rows -o %t.rows.dync.so --dynamic 'x:0=n[2,20]' 2>&1 | FileCheck %s --check-prefix=PINNED
# RUN: not test -e %t.rows.dync.so
import torch


def chunks(x):
    pad = (8 - x.shape[0] % 8) % 8
    x = torch.nn.functional.pad(x, (0, 0, 0, pad))
    out = []
    for i in range(x.shape[0] // 8):
        out.append(x[i * 8:(i + 1) * 8].sum(0))
    return torch.stack(out)


def rows(x):
    total = x[0]
    for i in range(1, x.shape[0]):
        total = total + x[i]
    return total


def example_inputs():
    return (torch.randn(11, 4),)

# NOTES: dync: note: chunks: no graph made so far serves s = 2 of the declared ranges; adding a graph for it
# NOTES: dync: note: chunks: no graph made so far serves s = 17 of the declared ranges; adding a graph for it
# NOTES-NOT: warning

# CHECK: graph @chunks(%x: tensor<f32, [s, 4]> = L['x'])
# CHECK-NEXT: symbols { s: [2, 20] }
# CHECK-NEXT: relations { (s + 7*(s mod 8) mod 8) floordiv 8 == 2,
# CHECK: graph @chunks$s_2(%x: tensor<f32, [s, 4]> = L['x'])
# CHECK-NEXT: symbols { s: [2, 20] }
# CHECK-NEXT: relations { (s + 7*(s mod 8) mod 8) floordiv 8 == 1,
# CHECK: graph @chunks$s_17(%x: tensor<f32, [s, 4]> = L['x'])
# CHECK-NEXT: symbols { s: [2, 20] }
# CHECK-NEXT: relations { (s + 7*(s mod 8) mod 8) floordiv 8 == 3,

# PINNED: dynamic-loop-count.py:25:14: error: --dynamic 'x:0=n[2,20]' contradicts the program: this line specializes dimension 0 of L['x'] to 11 (range() unrolls the Python loop at the example's trip count, as torch.export does: keep that dimension static, or loop in the graph over tensors with torch._higher_order_ops.while_loop)
# PINNED-NEXT: {{^}}    for i in range(1, x.shape[0]):
