# torch.cond on a tensor predicate: both branches are captured, each into a
# subgraph of the module whose inputs are the tensors of the graph it uses
# (operands, parameters it closes over), both taking the union in one
# order; the graph reads the predicate as bool() does and a
# higher_order::cond node runs the branch it picks. With grad mode on, each
# result goes through where(False, s, r), which gives every operand eager's
# gradient (zeros when the branch that ran does not use it). Branches nest.
# What eager's cond refuses, and side effects in a branch, are refused at
# the program's line.
# RUN: %dync export %s:Closure.forward --example one_input --emit=graph | FileCheck %s
# RUN: %dync export %s:nested --example one_input --emit=graph | FileCheck %s --check-prefix=NESTED
# RUN: %dync export %s:dynamic --example one_input --dynamic 'x:0=n[2,16]' --emit=graph | FileCheck %s --check-prefix=DYNAMIC
# Each refused program is an entry of one export that goes on past each
# refusal, and each refusal is reported at its line, in entry order.
# RUN: not %dync export %s:Attr.forward %s:appends %s:local_list %s:prints %s:mutates \
# RUN:   %s:aliases %s:structure %s:dtypes %s:two_elements %s:int_operand \
# RUN:   --example one_input --example appends=with_list --keep-going --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefixes=ATTR,APPENDS,LOCAL,PRINTS,MUTATES,ALIASES,STRUCTURE,DTYPES,NUMEL,OPERANDS
import torch
from torch import nn


class Closure(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4))

    def forward(self, x):
        def big(a, pair):
            return {"h": a.sin() * self.w, "rest": [pair["b"] + 1, 2]}

        def small(a, pair):
            return {"h": a.cos(), "rest": [pair["b"] * 3.0, 2]}

        out = torch.cond(x.sum() > 0, big, small, (x, {"b": x * 2}))
        return out["h"], out["rest"]

# CHECK-LABEL: subgraph @Closure.forward.cond0.true(%x: tensor<f32, [3, 4]>,
# CHECK-NEXT:                                      %self_w: tensor<f32, [4], requires_grad>,
# CHECK-NEXT:                                      %[[B:[0-9]+]]: tensor<f32, [3, 4]>) {
# CHECK-NEXT:    %0 = aten::sin.default(%x)
# CHECK-NEXT:    %1 = aten::mul.Tensor(%0, %self_w)
# CHECK-NEXT:    %[[R:[0-9]+]] = aten::add.Tensor(%[[B]], 1)
# CHECK-NEXT:    return (%1, %[[R]])
# CHECK-LABEL: subgraph @Closure.forward.cond0.false(%x: tensor<f32, [3, 4]>,
# CHECK-NEXT:                                       %self_w: tensor<f32, [4], requires_grad>,
# CHECK-NEXT:                                       %[[B2:[0-9]+]]: tensor<f32, [3, 4]>) {
# CHECK-NEXT:    %0 = aten::cos.default(%x)
# CHECK-NEXT:    %1 = aten::mul.Tensor(%[[B2]], 3.0)
# CHECK-NEXT:    return (%0, %1)
# CHECK-LABEL: graph @Closure.forward(
# CHECK:         %[[SUM:[0-9]+]] = aten::sum.dim_IntList(%x, [])
# CHECK-NEXT:    %[[GT:[0-9]+]] = aten::gt.Scalar(%[[SUM]], 0)
# CHECK-NEXT:    %[[TWICE:[0-9]+]] = aten::mul.Tensor(%x, 2)
# CHECK-NEXT:    %[[PRED:[0-9]+]] = aten::is_nonzero.default(%[[GT]]) : bool
# CHECK-NEXT:    %[[COND:[0-9]+]] = higher_order::cond(%[[PRED]], "Closure.forward.cond0.true", "Closure.forward.cond0.false", %x, %self_w, %[[TWICE]]) : tuple<tensor<f32, [3, 4]>, tensor<f32, [3, 4]>>
# CHECK:         aten::where.self(%{{[0-9]+}}, %{{[0-9]+}}, %[[COND]]#0)
# CHECK:         aten::where.self(%{{[0-9]+}}, %{{[0-9]+}}, %[[COND]]#1)
# CHECK:         return (%{{[0-9]+}}, [%{{[0-9]+}}, 2])


def nested(x):
    def inner(a):
        return torch.cond(a.mean() > 1, lambda b: b * 2, lambda b: b.exp(), (a,))

    return torch.cond(x.sum() > 0, inner, lambda a: a - 1, (x,))

# NESTED: subgraph @nested.cond0.true.cond0.true(%x: tensor<f32, [3, 4]>)
# NESTED: subgraph @nested.cond0.true.cond0.false(%x: tensor<f32, [3, 4]>)
# NESTED: subgraph @nested.cond0.true(%x: tensor<f32, [3, 4]>)
# NESTED: higher_order::cond(%{{[0-9]+}}, "nested.cond0.true.cond0.true", "nested.cond0.true.cond0.false", %x)
# NESTED: subgraph @nested.cond0.false(%x: tensor<f32, [3, 4]>)
# NESTED: graph @nested(
# NESTED: higher_order::cond(%{{[0-9]+}}, "nested.cond0.true", "nested.cond0.false", %x)


def dynamic(x):
    return torch.cond(x.sum() > 0, lambda a: a[1:] * 2, lambda a: a[:-1].exp(), (x,))

# DYNAMIC: subgraph @dynamic.cond0.true(%x: tensor<f32, [n, 4]>)
# DYNAMIC-NEXT: symbols { n: [2, 16] } {
# DYNAMIC: return (%{{[0-9]+}},)
# DYNAMIC: higher_order::cond(%{{[0-9]+}}, "dynamic.cond0.true", "dynamic.cond0.false", %x) : tuple<tensor<f32, [n - 1, 4]>>


class Attr(nn.Module):
    def __init__(self):
        super().__init__()
        self.count = 0

    def forward(self, x):
        def count(a):
            self.count = 1
            return a + 1

        return torch.cond(x.sum() > 0, count, lambda a: a - 1, (x,))

# ATTR: cond-tensor-predicate.py:[[@LINE-2]]:16: error: torch.cond's true branch assigns attribute 'count' of L['self'] at {{.*}}cond-tensor-predicate.py:[[@LINE-5]]; a branch runs only when the graph picks it, so it may change nothing that exists before it (side effects in torch.cond branches are not supported)


def appends(x, log):
    def record(a):
        log.append(1)
        return a + 1

    return torch.cond(x.sum() > 0, record, lambda a: a - 1, (x,))

# APPENDS: cond-tensor-predicate.py:[[@LINE-2]]:12: error: torch.cond's true branch changes L['log'] in place at {{.*}}cond-tensor-predicate.py:[[@LINE-5]]; a branch runs only when the graph picks it


def local_list(x):
    seen = []

    def record(a):
        seen.append(a)
        return a + 1

    out = torch.cond(x.sum() > 0, record, lambda a: a - 1, (x,))
    return out, len(seen)

# LOCAL: cond-tensor-predicate.py:[[@LINE-3]]:11: error: torch.cond's true branch changes a list made before it in place; a branch runs only when the graph picks it


def prints(x):
    def say(a):
        print("true")
        return a + 1

    return torch.cond(x.sum() > 0, say, lambda a: a - 1, (x,))

# PRINTS: cond-tensor-predicate.py:[[@LINE-2]]:12: error: torch.cond's true branch calls M['builtins'].print at {{.*}}cond-tensor-predicate.py:[[@LINE-5]]; a branch runs only when the graph picks it


def mutates(x):
    def bump(a):
        a.add_(1)
        return a * 2

    return torch.cond(x.sum() > 0, bump, lambda a: a - 1, (x,))

# MUTATES: cond-tensor-predicate.py:[[@LINE-2]]:12: error: torch.cond's true branch writes one of its operands in place (aten::add_.Tensor) (at {{.*}}cond-tensor-predicate.py:[[@LINE-5]]:9, inlined from {{.*}}); torch.cond's branches may not mutate their operands


def aliases(x):
    return torch.cond(x.sum() > 0, lambda a: a, lambda a: a - 1, (x,))

# ALIASES: cond-tensor-predicate.py:[[@LINE-2]]:12: error: torch.cond's true branch returns one of its operands, or a view of one {{.*}}; torch.cond's results may not alias its operands (return a clone)


def structure(x):
    return torch.cond(x.sum() > 0, lambda a: (a + 1,), lambda a: [a - 1], (x,))

# STRUCTURE: cond-tensor-predicate.py:[[@LINE-2]]:12: error: torch.cond's branches return results of different pytree structures; both must return the same structure


def dtypes(x):
    return torch.cond(x.sum() > 0, lambda a: a + 1, lambda a: (a - 1).double(), (x,))

# DTYPES: cond-tensor-predicate.py:[[@LINE-2]]:12: error: torch.cond's branches return tensors of different types as result 0: tensor<f32, [3, 4]> and tensor<f64, [3, 4]>; both must return the same dtype, sizes and strides


def two_elements(x):
    return torch.cond(x[0] > 0, lambda a: a + 1, lambda a: a - 1, (x,))

# NUMEL: cond-tensor-predicate.py:[[@LINE-2]]:12: error: the program raises RuntimeError: Expected pred to be bool or single-element tensor


def int_operand(x):
    return torch.cond(x.sum() > 0, lambda a, n: a + n, lambda a, n: a - n, (x, 2))

# OPERANDS: cond-tensor-predicate.py:[[@LINE-2]]:12: error: the program raises RuntimeError: Expect operands to be a tuple of possibly nested dict/list/tuple that only consists of tensor leaves


def one_input():
    return (torch.randn(3, 4),)


def with_list():
    return (torch.randn(3, 4), [])
