# torch's control-flow operators called as functions. torch.cond on a Python
# bool or a comparison of sizes captures the branch it takes, with pytree
# operands and branches closing over the module's parameters; a symbolic
# predicate is decided as an `if` on it is (the declared range holds it).
# torch map runs its function per row of the mapped pytree, with an extra
# argument, and stacks each leaf of the results. A tensor predicate puts
# both branches in the graph (test/capture/cond-tensor-predicate.py); a
# dynamic number of rows is refused at the program's line.
# RUN: %dync export %s:CondMap.forward --emit=graph | FileCheck %s
# RUN: %dync export %s:size_pred --example one_input --dynamic 'x:0=n[3,8]' --emit=graph | FileCheck %s --check-prefix=SYMBOLIC
# RUN: not %dync export %s:size_pred --example one_input --dynamic 'x:0=n[1,8]' --emit=graph 2>&1 | FileCheck %s --check-prefix=SPLIT
# RUN: %dync export %s:tensor_pred --example one_input --emit=graph 2>&1 | FileCheck %s --check-prefix=TENSOR
# RUN: not %dync export %s:dynamic_rows --example one_input --dynamic 'x:0=n[1,8]' --emit=graph 2>&1 | FileCheck %s --check-prefix=ROWS
import torch
from torch import nn
from torch._higher_order_ops import map as torch_map


class CondMap(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(4))

    def forward(self, x, ys):
        def big(a, pair):
            return a * self.scale + pair["b"]

        def small(a, pair):
            return a - pair["b"]

        out = torch.cond(x.shape[0] > 2, big, small, (x, {"b": ys[0]}))

        def step(rows, bias):
            return {"s": rows[0] + bias, "t": (rows[1].sum(),)}

        return out, torch_map(step, (x, ys), self.scale)

# CHECK-LABEL: graph @CondMap.forward
# CHECK: %[[B:[0-9]+]] = aten::select.int(%ys, 0, 0)
# CHECK: %[[BIG:[0-9]+]] = aten::mul.Tensor(%x, %self_scale)
# CHECK-NEXT: %[[OUT:[0-9]+]] = aten::add.Tensor(%[[BIG]], %[[B]])
# CHECK-NOT: aten::sub
# CHECK: %[[X0:[0-9]+]] = aten::select.int(%x, 0, 0)
# CHECK-NEXT: %[[Y0:[0-9]+]] = aten::select.int(%ys, 0, 0)
# CHECK-NEXT: %[[S0:[0-9]+]] = aten::add.Tensor(%[[X0]], %self_scale)
# CHECK-NEXT: %[[T0:[0-9]+]] = aten::sum.dim_IntList(%[[Y0]], [])
# CHECK: aten::select.int(%x, 0, 1)
# CHECK: aten::select.int(%x, 0, 2)
# CHECK: %[[S:[0-9]+]] = aten::cat.default([%[[S0]], %{{[0-9]+}}, %{{[0-9]+}}])
# CHECK-NEXT: %[[SV:[0-9]+]] = aten::view.default(%[[S]], [3, 4])
# CHECK-NEXT: %[[T0U:[0-9]+]] = aten::unsqueeze.default(%[[T0]], 0)
# CHECK: %[[T:[0-9]+]] = aten::cat.default([%[[T0U]], %{{[0-9]+}}, %{{[0-9]+}}])
# CHECK-NEXT: return (%[[OUT]], {"s": %[[SV]], "t": (%[[T]],)})


def size_pred(x):
    return torch.cond(x.shape[0] > 2, lambda a: a + 1, lambda a: a - 1, (x,))

# SYMBOLIC: graph @size_pred(%x: tensor<f32, [n, 4]> = L['x'])
# SYMBOLIC-NEXT: symbols { n: [3, 8] }
# SYMBOLIC-NEXT: aten::add.Tensor(%x, 1)
# SPLIT: control-flow-operators.py:[[@LINE-5]]:12: error: --dynamic 'x:0=n[1,8]' contradicts the program: this line assumes dimension 0 of L['x'] is in [3, 8]


def tensor_pred(x):
    return torch.cond(x.sum() > 0, lambda a: a + 1, lambda a: a - 1, (x,))

# TENSOR: subgraph @tensor_pred.cond0.true(%x: tensor<f32, [3, 4]>)
# TENSOR: subgraph @tensor_pred.cond0.false(%x: tensor<f32, [3, 4]>)
# TENSOR: higher_order::cond(%{{[0-9]+}}, "tensor_pred.cond0.true", "tensor_pred.cond0.false", %x)


def dynamic_rows(x):
    return torch_map(lambda row: row * 2, x)

# ROWS: control-flow-operators.py:[[@LINE-2]]:12: error: torch map over a dynamic leading dimension is not supported yet: capture runs the mapped function once per row, so the number of rows must be known when capturing


def example_inputs():
    return (torch.randn(3, 4), torch.randn(3, 4))


def one_input():
    return (torch.randn(3, 4),)
