# torch's scan and while_loop, unrolled while capturing. scan runs
# combine_fn once per slice of xs along dim (from the last slice when
# reversed), with pytree init, xs and ys and closures over parameters, and
# stacks each y leaf in slice order, moved to dim. while_loop on a Python
# predicate (a Python bool, or a comparison of sizes decided as an `if`
# on it is) runs its body until the predicate fails (a tensor predicate is
# a while_loop node: while-loop-tensor-predicate.py). Eager's checks raise
# as eager's do; a dynamic scanned length is refused at the program's line. associative_scan raises eager's errors (its
# pointwise mode runs only on CUDA or XPU tensors).
# RUN: %dync export %s:Scan.forward --emit=graph | FileCheck %s
# RUN: %dync export %s:loop --example one_input --emit=graph | FileCheck %s --check-prefix=LOOP
# RUN: %dync export %s:halve --example one_input --dynamic 'x:0=n[6,11]' --emit=graph | FileCheck %s --check-prefix=SYMBOLIC
# RUN: not %dync export %s:halve --example one_input --dynamic 'x:0=n[3,11]' --emit=graph 2>&1 | FileCheck %s --check-prefix=SPLIT
# RUN: not %dync export %s:dynamic_length --example one_input --dynamic 'x:0=n[2,8]' --emit=graph 2>&1 | FileCheck %s --check-prefix=DYNAMIC
# Each refused program is an entry of one export that goes on past each
# refusal, and each refusal is reported at its line, in entry order.
# RUN: not %dync export %s:float_dim %s:carry_dtype %s:returns_input %s:writes_carry \
# RUN:   %s:pointwise_cpu %s:bad_mode %s:GradLoop.forward --example one_input \
# RUN:   --keep-going --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefixes=DIM,CARRY,ALIAS,MUTATE,POINTWISE,MODE,GRADINT
import torch
from torch import nn
from torch._higher_order_ops.scan import scan
from torch._higher_order_ops.while_loop import while_loop
from torch._higher_order_ops.associative_scan import associative_scan


class Scan(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(3))

    def forward(self, x, ys):
        def step(carry, xs):
            c = carry["h"] * self.w + xs[0]
            return {"h": c}, (c.sum(), xs[1] * 2)

        return scan(step, {"h": torch.zeros(3)}, (x, ys), dim=1, reverse=True)

# CHECK-LABEL: graph @Scan.forward
# CHECK: %[[X3:[0-9]+]] = aten::select.int(%x, 1, 3)
# CHECK-NEXT: %[[Y3:[0-9]+]] = aten::select.int(%ys, 1, 3)
# CHECK-NEXT: %[[M3:[0-9]+]] = aten::mul.Tensor(%{{[0-9]+}}, %self_w)
# CHECK-NEXT: %[[C3:[0-9]+]] = aten::add.Tensor(%[[M3]], %[[X3]])
# CHECK: aten::select.int(%x, 1, 2)
# CHECK: aten::select.int(%x, 1, 1)
# CHECK: %[[X0:[0-9]+]] = aten::select.int(%x, 1, 0)
# CHECK: %[[C0:[0-9]+]] = aten::add.Tensor(%{{[0-9]+}}, %[[X0]])
# CHECK: %[[S:[0-9]+]] = aten::cat.default([%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}]) : tensor<f32, [4]>
# CHECK: %[[T:[0-9]+]] = aten::view.default(%{{[0-9]+}}, [4, 3])
# CHECK-NEXT: %[[TD:[0-9]+]] = aten::permute.default(%[[T]], [1, 0]) : tensor<f32, [3, 4], [1, 3]>
# CHECK: aten::full.default([], false, dtype=bool
# CHECK-NEXT: aten::alias.default
# CHECK-NEXT: %[[NEVER:[0-9]+]] = aten::alias.default(%{{[0-9]+}}) : tensor<bool, []>
# CHECK-NEXT: %[[RC:[0-9]+]] = aten::where.self(%[[NEVER]], %{{[0-9]+}}, %[[C0]])
# CHECK-NEXT: %[[RS:[0-9]+]] = aten::where.self(%[[NEVER]], %{{[0-9]+}}, %[[S]])
# CHECK-NEXT: %[[RT:[0-9]+]] = aten::where.self(%[[NEVER]], %{{[0-9]+}}, %[[TD]])
# CHECK-NEXT: return ({"h": %[[RC]]}, (%[[RS]], %[[RT]]))


def loop(x):
    def cond_fn(i, state):
        return i < 3

    def body_fn(i, state):
        return i + 1, [state[0] * 2]

    return while_loop(cond_fn, body_fn, (0, [x]))

# LOOP-LABEL: graph @loop
# LOOP: %[[A:[0-9]+]] = aten::mul.Tensor(%x, 2)
# LOOP-NEXT: %[[B:[0-9]+]] = aten::mul.Tensor(%[[A]], 2)
# LOOP-NEXT: %[[C:[0-9]+]] = aten::mul.Tensor(%[[B]], 2)
# LOOP-NOT: aten::mul
# LOOP: return (3, [%{{[0-9]+}}])


def halve(x):
    return while_loop(lambda n, h: n > 2, lambda n, h: (n // 2, h * 2), (x.shape[0], x))

# SYMBOLIC: graph @halve(%x: tensor<f32, [n, 4]> = L['x'])
# SYMBOLIC-NEXT: symbols { n: [6, 11] }
# SYMBOLIC-NEXT: %[[A:[0-9]+]] = aten::mul.Tensor(%x, 2)
# SYMBOLIC-NEXT: %[[B:[0-9]+]] = aten::mul.Tensor(%[[A]], 2)
# SYMBOLIC-NOT: aten::mul
# SYMBOLIC: return (n floordiv 4, %{{[0-9]+}})
# SPLIT: loop-operators.py:[[@LINE-8]]:12: error: --dynamic 'x:0=n[3,11]' contradicts the program: this line assumes dimension 0 of L['x'] is in [6, 11]


def dynamic_length(x):
    return scan(lambda c, r: (c + r, c * 2), torch.zeros(4), x)

# DYNAMIC: loop-operators.py:[[@LINE-2]]:12: error: torch scan over a dynamic scanned dimension is not supported yet: capture runs combine_fn once per slice, so the scanned length must be known when capturing


def float_dim(x):
    return scan(lambda c, r: (c + r, c * 2), torch.zeros(4), x, dim=0.0)

# DIM: loop-operators.py:[[@LINE-2]]:12: error: the program raises RuntimeError: Dim must be an int, but got <class 'float'>


def carry_dtype(x):
    return scan(lambda c, r: ((c + r).double(), c * 2), torch.zeros(4), x)

# CARRY: loop-operators.py:[[@LINE-2]]:12: error: the program raises RuntimeError: Expected init and carry to have same metadata but found: pair[0] differ in 'dtype'


def returns_input(x):
    return scan(lambda c, r: (c + r, r), torch.zeros(4), x)

# ALIAS: loop-operators.py:[[@LINE-2]]:12: error: torch scan's combine_fn returns one of its inputs, or a view of one; the loop's results may not alias its inputs (return a clone)


def writes_carry(x):
    return while_loop(lambda i, h: i < 2, lambda i, h: (i + 1, h.mul_(2)), (0, x.clone()))

# MUTATE: loop-operators.py:[[@LINE-2]]:12: error: torch while_loop's body_fn writes one of its inputs in place (aten::mul_.Tensor)


def pointwise_cpu(x):
    return associative_scan(lambda a, b: a + b, x, 0)

# POINTWISE: loop-operators.py:[[@LINE-2]]:12: error: the program raises ValueError: For combine_mode='pointwise', all input tensors need to be on CUDA or XPU


def bad_mode(x):
    return associative_scan(lambda a, b: a + b, x, 0, combine_mode="serial")

# MODE: loop-operators.py:[[@LINE-2]]:12: error: the program raises ValueError: Combine_mode must either 'pointwise' or 'generic', but got serial


class GradLoop(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(4))

    def forward(self, x):
        return while_loop(lambda i, h: i < 2, lambda i, h: (i + 1, h * self.w), (0, x))

# GRADINT: loop-operators.py:[[@LINE-2]]:16: error: the program raises RuntimeError: all carried_inputs must be tensors for stack_output: with grad mode on and a tensor that requires grad, torch while_loop carries only tensors


def example_inputs():
    return (torch.randn(3, 4), torch.randn(3, 4))


def one_input():
    return (torch.randn(8, 4),)
