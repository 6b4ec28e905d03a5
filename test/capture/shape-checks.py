# torch._check and torch's symbolic-shape API (expect_true, guard_or_false,
# from torch.fx.experimental.symbolic_shapes) on sizes: with static sizes the
# condition is a plain bool; on a symbolic size the function runs on the
# SymBool as torch defines it, and its decision becomes the symbol's range.
# `from module import name` imports the module named, not its package.
# RUN: %dync export %s:checks --emit=graph | FileCheck %s --check-prefix=STATIC
# RUN: %dync export %s:checks --emit=graph --dynamic 'x:0=n' | FileCheck %s --check-prefix=DYNAMIC
# RUN: not %dync export %s:fails --emit=graph 2>&1 | FileCheck %s --check-prefix=FAILS
import torch


def checks(x):
    from torch.fx.experimental.symbolic_shapes import guard_or_false

    torch._check(x.shape[0] > 2, lambda: "need more than 2 rows")
    if guard_or_false(x.shape[0] == 1):
        return x
    return x.sum(0)

# STATIC:      graph @checks(%x: tensor<f32, [4, 3]> = L['x']) {
# STATIC-NEXT: aten::sum.dim_IntList(%x, [0])

# DYNAMIC:      graph @checks(%x: tensor<f32, [n, 3]> = L['x'])
# DYNAMIC-NEXT: symbols { n: [3, inf] } {
# DYNAMIC-NEXT: aten::sum.dim_IntList(%x, [0])


def fails(x):
    torch._check(x.shape[0] > 8, lambda: "need more than 8 rows")
    return x

# FAILS: shape-checks.py:[[@LINE-3]]:5: error: the program raises RuntimeError: need more than 8 rows


def example_inputs():
    return (torch.randn(4, 3),)
