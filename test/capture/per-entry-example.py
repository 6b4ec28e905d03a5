# --example QUALNAME=NAME gives each entry its own example arguments, so that
# entries with different parameters are captured in one run; a plain
# --example NAME still applies to the entries not named, and an --example for
# an entry that is not captured is a usage error.
# RUN: %dync export %s:add %s:matmul %s:scale --emit=signature --example add=add_inputs \
# RUN:   --example matmul=matmul_inputs --example scale_inputs | FileCheck %s
# RUN: not %dync export %s:add --emit=signature --example other=add_inputs 2>&1 \
# RUN:   | FileCheck %s --check-prefix=NOENTRY
# RUN: not %dync export %s:add --emit=signature --example add= 2>&1 \
# RUN:   | FileCheck %s --check-prefix=MALFORMED
import torch


def add(x, y):
    return x + y


def matmul(a, b):
    return a @ b


def scale(x):
    return x * 2


def add_inputs():
    return (torch.randn(2, 3), torch.randn(3))


def matmul_inputs():
    return (torch.randn(4, 5), torch.randn(5, 6))


def scale_inputs():
    return (torch.randn(7),)

# CHECK:      # entry: {{.*}}per-entry-example.py:add
# CHECK-NEXT: result: tensor<f32, [2, 3]>
# CHECK-NEXT: # entry: {{.*}}per-entry-example.py:matmul
# CHECK-NEXT: result: tensor<f32, [4, 6]>
# CHECK-NEXT: # entry: {{.*}}per-entry-example.py:scale
# CHECK-NEXT: result: tensor<f32, [7]>
# NOENTRY: dync: error: --example 'other=add_inputs' names no entry: other is not captured
# MALFORMED: dync: error: malformed --example 'add=': expected NAME or QUALNAME=NAME
