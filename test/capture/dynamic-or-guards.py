# A guard torch records as a boolean combination of comparisons (an Or of
# two, here from `bool()` of SymBools joined with `|`) is kept as a relation
# that is a disjunction: printed with `or` in the graph's header and checked
# by the artifact's native guard, whose miss reason names it. Over one
# symbol, the sizes it leaves out get a graph of their own under -o; over
# two, the graph serves what it admits.
# RUN: rm -rf %t && mkdir -p %t
# RUN: %dync export %s:either --emit=graph --dynamic 'x:0=n[1,64]' | FileCheck %s --check-prefix=EITHER
# RUN: %dync export %s:either --emit=llvm --dynamic 'x:0=n[1,64]' | FileCheck %s --check-prefix=LLVM
# RUN: %dync export %s:two --example two_inputs --emit=graph --dynamic 'x:0=n[1,64]' --dynamic 'y:0=m[1,64]' \
# RUN:   | FileCheck %s --check-prefix=TWO
# RUN: %dync export %s:neither --emit=graph --dynamic 'x:0=n[1,64]' --example neither_inputs \
# RUN:   | FileCheck %s --check-prefix=NEITHER
import torch


def either(x):
    n = x.shape[0]
    if (n % 4 == 0) | (n == 6):
        return x * 2
    return x - 1


def two(x, y):
    if (x.shape[0] % 4 == 0) | (y.shape[0] == 3):
        return x.sum() * y.sum()
    return x.sum() - y.sum()


def neither(x):
    # The negation of an Or is an And: two relations, each a comparison.
    n = x.shape[0]
    if (n % 4 == 0) | (n == 6):
        return x * 2
    return x - 1


def example_inputs():
    return (torch.randn(8, 3),)


def two_inputs():
    return (torch.randn(8, 3), torch.randn(5))


def neither_inputs():
    return (torch.randn(7, 3),)

# EITHER: graph @either(%x: tensor<f32, [n, 3]> = L['x'])
# EITHER-NEXT: symbols { n: [2, 64] }
# EITHER-NEXT: relations { n == 6 or n mod 4 == 0 } {
# EITHER-NEXT: aten::mul.Tensor(%x, 2)

# LLVM: relation n == 6 or n mod 4 == 0 does not hold (n = L['x'].size(0))
# LLVM: %[[EQ:.*]] = icmp eq i64 %n, 6
# LLVM: %[[MOD:.*]] = icmp eq i64 %mod, 0
# LLVM: %[[ANY:.*]] = or i1 %[[EQ]], %[[MOD]]
# LLVM: br i1 %[[ANY]]

# TWO: graph @two(%x: tensor<f32, [n, 3]> = L['x'],
# TWO-NEXT: %y: tensor<f32, [m]> = L['y'])
# TWO-NEXT: symbols { n: [2, 64], m: [2, 64] }
# TWO-NEXT: relations { m == 3 or n mod 4 == 0 } {

# NEITHER: graph @neither(%x: tensor<f32, [n, 3]> = L['x'])
# NEITHER-NEXT: symbols { n: [2, 64] }
# NEITHER-NEXT: relations { n != 6, n mod 4 != 0 } {
# NEITHER-NEXT: aten::sub.Tensor(%x, 1)
