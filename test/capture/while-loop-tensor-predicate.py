# torch's while_loop whose cond_fn returns a tensor: the number of
# iterations is known only when the graph runs, so cond_fn and body_fn are
# captured once each, into subgraphs of the module taking the carried
# values (clones of carried_inputs' tensors, pytrees flattened) and then
# every other tensor of the graph they use (parameters, tensors they close
# over); a higher_order::while_loop node runs them. With grad mode on, a
# tensor that requires grad is refused (eager's autograd Function gives
# gradients the loop's calls do not): only the variant for grad mode on is
# left out. Sizes may be symbolic; loops nest; ints are carried. What
# eager's while_loop refuses is refused at the program's line, and so are
# other numbers carried and strides body_fn changes.
# RUN: %dync export %s:Closure.forward --example one_input --emit=graph | FileCheck %s
# RUN: not %dync export %s:Trained.forward --example one_input --emit=graph 2>&1 | FileCheck %s --check-prefix=GRAD
# RUN: %dync export %s:Trained.forward --example one_input -o %t.so -v 2>&1 | FileCheck %s --check-prefix=VARIANT
# RUN: %dync export %s:dynamic --example one_input --dynamic 'x:0=n[2,16]' --emit=graph | FileCheck %s --check-prefix=DYNAMIC
# RUN: %dync export %s:nested --example one_input --emit=graph | FileCheck %s --check-prefix=NESTED
# RUN: %dync export %s:int_carry --example one_input --emit=graph | FileCheck %s --check-prefix=INT
# Each refused program is an entry of one export that goes on past each
# refusal, and each refusal is reported at its line, in entry order.
# RUN: not %dync export %s:float_carry %s:int_to_float %s:checked_int %s:vector_pred %s:float_pred %s:body_dtype \
# RUN:   %s:body_shape %s:body_strides %s:body_structure %s:returns_carry %s:writes_carry %s:appends \
# RUN:   --example one_input --example appends=with_list --keep-going --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefixes=FLOATCARRY,INTFLOAT,CHECKED,PRED,FLOATPRED,DTYPE,SHAPE,STRIDES,STRUCTURE,ALIAS,MUTATE,EFFECT
import torch
from torch import nn
from torch._higher_order_ops.while_loop import while_loop


class Closure(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("w", torch.randn(4))

    def forward(self, x):
        limit = x.abs().sum()

        def cond_fn(i, state):
            return (state["h"].sum() < limit) & (i < 10)

        def body_fn(i, state):
            return i + 1, {"h": state["h"] * self.w + 1, "n": [state["n"][0] + 1]}

        return while_loop(cond_fn, body_fn, (torch.tensor(0), {"h": x, "n": [x.sum(0)]}))

# CHECK-LABEL: subgraph @Closure.forward.while0.cond(
# CHECK-SAME:                                        %[[I:[0-9]+]]: tensor<i64, []>,
# CHECK-NEXT:                                        %[[H:[0-9]+]]: tensor<f32, [3, 4]>,
# CHECK-NEXT:                                        %[[N:[0-9]+]]: tensor<f32, [4]>,
# CHECK-NEXT:                                        %[[LIMIT:[0-9]+]]: tensor<f32, []>,
# CHECK-NEXT:                                        %self_w: tensor<f32, [4]>) {
# CHECK-NEXT:    %[[SUM:[0-9]+]] = aten::sum.dim_IntList(%[[H]], [])
# CHECK-NEXT:    %[[BELOW:[0-9]+]] = aten::lt.Tensor(%[[SUM]], %[[LIMIT]])
# CHECK-NEXT:    %[[FEW:[0-9]+]] = aten::lt.Scalar(%[[I]], 10)
# CHECK-NEXT:    %[[BOTH:[0-9]+]] = aten::bitwise_and.Tensor(%[[BELOW]], %[[FEW]]) : tensor<bool, []>
# CHECK-NEXT:    return (%[[BOTH]],)
# CHECK-LABEL: subgraph @Closure.forward.while0.body(
# CHECK-SAME:                                        %[[I2:[0-9]+]]: tensor<i64, []>,
# CHECK-NEXT:                                        %[[H2:[0-9]+]]: tensor<f32, [3, 4]>,
# CHECK-NEXT:                                        %[[N2:[0-9]+]]: tensor<f32, [4]>,
# CHECK-NEXT:                                        %{{[0-9_]+}}: tensor<f32, []>,
# CHECK-NEXT:                                        %self_w: tensor<f32, [4]>) {
# CHECK-NEXT:    %[[NEXT_I:[0-9]+]] = aten::add.Tensor(%[[I2]], 1)
# CHECK-NEXT:    %[[SCALED:[0-9]+]] = aten::mul.Tensor(%[[H2]], %self_w)
# CHECK-NEXT:    %[[NEXT_H:[0-9]+]] = aten::add.Tensor(%[[SCALED]], 1)
# CHECK-NEXT:    %[[NEXT_N:[0-9]+]] = aten::add.Tensor(%[[N2]], 1)
# CHECK-NEXT:    return (%[[NEXT_I]], %[[NEXT_H]], %[[NEXT_N]])
# CHECK-LABEL: graph @Closure.forward(
# CHECK:         %[[CI:[0-9]+]] = aten::clone.default(%{{[0-9]+}}) : tensor<i64, []>
# CHECK-NEXT:    %[[CH:[0-9]+]] = aten::clone.default(%x) : tensor<f32, [3, 4]>
# CHECK-NEXT:    %[[CN:[0-9]+]] = aten::clone.default(%{{[0-9]+}}) : tensor<f32, [4]>
# CHECK-NEXT:    %[[LOOP:[0-9]+]] = higher_order::while_loop("Closure.forward.while0.cond", "Closure.forward.while0.body", [%[[CI]], %[[CH]], %[[CN]]], [%{{[0-9]+}}, %self_w]) : tuple<tensor<i64, []>, tensor<f32, [3, 4]>, tensor<f32, [4]>>
# CHECK-NEXT:    return (%[[LOOP]]#0, {"h": %[[LOOP]]#1, "n": [%[[LOOP]]#2]})


class Trained(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4))

    def forward(self, x):
        return while_loop(lambda h: h.sum() < 10, lambda h: (h * self.w + 1,), (x,))

# GRAD: while-loop-tensor-predicate.py:[[@LINE-2]]:16: error: torch while_loop on a tensor predicate with grad mode on and a tensor that requires grad (L['self']._parameters['w']) is not supported: eager runs it as an autograd Function whose gradients the graph's loop does not reproduce
# VARIANT: dync: Trained.forward: calls with grad mode on are not compiled (they run the original code): {{.*}}while-loop-tensor-predicate.py:[[@LINE-3]]:16: torch while_loop on a tensor predicate with grad mode on


def dynamic(x):
    return while_loop(lambda h: h.sum() < 100, lambda h: (h * 2 + 1,), (x,))

# DYNAMIC-LABEL: subgraph @dynamic.while0.cond(%{{[0-9]+}}: tensor<f32, [n, 4]>)
# DYNAMIC-NEXT:      symbols { n: [2, 16] } {
# DYNAMIC-LABEL: subgraph @dynamic.while0.body(%{{[0-9]+}}: tensor<f32, [n, 4]>)
# DYNAMIC-NEXT:      symbols { n: [2, 16] } {
# DYNAMIC-LABEL: graph @dynamic(
# DYNAMIC:         higher_order::while_loop("dynamic.while0.cond", "dynamic.while0.body", [%{{[0-9]+}}], []) : tuple<tensor<f32, [n, 4]>>


def nested(x):
    # An inner loop and a tensor cond in the body of an outer loop.
    def inner_body(j, h):
        return j + 1, torch.cond(h.sum() > 0, lambda a: a - 1, lambda a: a + 2, (h,))

    def body(i, h):
        _, h = while_loop(lambda j, h: j < i, inner_body, (torch.tensor(0), h))
        return i + 1, h

    return while_loop(lambda i, h: i < 3, body, (torch.tensor(0), x))

# NESTED-LABEL: subgraph @nested.while0.cond(
# NESTED-LABEL: subgraph @nested.while0.body.while0.cond(
# NESTED-LABEL: subgraph @nested.while0.body.while0.body.cond0.true(
# NESTED-LABEL: subgraph @nested.while0.body.while0.body.cond0.false(
# NESTED-LABEL: subgraph @nested.while0.body.while0.body(
# NESTED:         higher_order::cond(
# NESTED-LABEL: subgraph @nested.while0.body(
# NESTED:         higher_order::while_loop("nested.while0.body.while0.cond", "nested.while0.body.while0.body",
# NESTED-LABEL: graph @nested(
# NESTED:         higher_order::while_loop("nested.while0.cond", "nested.while0.body",


def int_carry(x):
    # An int is carried as a 0-dim int64 tensor; the functions read it with
    # item() (a symbol of the subgraph's own), body_fn's int goes back into
    # a tensor, and the loop's result is item() of the last one.
    return while_loop(lambda i, h: h.sum() < 10, lambda i, h: (i + 1, h * i), (2, x))

# INT-LABEL: subgraph @int_carry.while0.body(
# INT-SAME:                                  %[[I:[0-9]+]]: tensor<i64, []>,
# INT-NEXT:                                  %[[H:[0-9]+]]: tensor<f32, [3, 4]>)
# INT-NEXT:      symbols { [[U:u[0-9]+]]: [-inf, inf] unbacked } {
# INT-NEXT:    %{{[0-9]+}} = aten::_local_scalar_dense.default(%[[I]]) : int<[[U]]>
# INT-NEXT:    %{{[0-9]+}} = aten::mul.Tensor(%[[H]], [[U]]) : tensor<f32, [3, 4]>
# INT-NEXT:    %{{[0-9]+}} = aten::scalar_tensor.default([[U]] + 1, dtype=i64, {{.*}}) : tensor<i64, []>
# INT-LABEL: graph @int_carry(
# INT:         %[[START:[0-9]+]] = aten::scalar_tensor.default(2, dtype=i64, {{.*}}) : tensor<i64, []>
# INT:         %[[LOOP:[0-9]+]] = higher_order::while_loop("int_carry.while0.cond", "int_carry.while0.body", [%{{[0-9]+}}, %{{[0-9]+}}], [])
# INT-NEXT:    %{{[0-9]+}} = aten::_local_scalar_dense.default(%[[LOOP]]#0) : int<[[N:u[0-9]+]]>
# INT-NEXT:    return ([[N]], %[[LOOP]]#1)


def float_carry(x):
    return while_loop(lambda s, h: h.sum() < 10, lambda s, h: (s + 1.0, h * 2), (0.5, x))

# FLOATCARRY: while-loop-tensor-predicate.py:[[@LINE-2]]:12: error: the program raises RuntimeError: Expect carried_inputs to be a tuple of possibly nested dict/list/tuple that only consists of tensor or int leaves


def int_to_float(x):
    return while_loop(lambda i, h: h.sum() < 10, lambda i, h: (i / 2, h * 2), (1, x))

# INTFLOAT: while-loop-tensor-predicate.py:[[@LINE-2]]:12: error: torch while_loop's body_fn returns a SymFloat for carried leaf 0, which is an int; return an int there


def checked_int(x):
    def body_fn(i, h):
        torch._check(i < 100)
        return i + 1, h * 2

    return while_loop(lambda i, h: h.sum() < 10, body_fn, (0, x))

# CHECKED: error: {{.*}}the subgraph @checked_int.while0.{{cond|body}} (a torch.cond branch or a torch while_loop function) uses the data-dependent value u{{[0-9]+}}, which such a function may use only as an int it computes itself (item() of a carried int) with no range or torch._check stated on it; other data-dependent values in them are not supported yet


def vector_pred(x):
    return while_loop(lambda h: h.sum(0) < 10, lambda h: (h * 2,), (x,))

# PRED: while-loop-tensor-predicate.py:[[@LINE-2]]:12: error: the program raises RuntimeError: cond_fn must return a boolean scalar tensor or a boolean but got a tensor of type tensor<bool, [4]>


def float_pred(x):
    return while_loop(lambda h: h.sum(), lambda h: (h * 2,), (x,))

# FLOATPRED: while-loop-tensor-predicate.py:[[@LINE-2]]:12: error: the program raises RuntimeError: cond_fn must return a boolean scalar tensor or a boolean but got a tensor of type tensor<f32, []>


def body_dtype(x):
    return while_loop(lambda h: h.sum() < 10, lambda h: (h.double(),), (x,))

# DTYPE: while-loop-tensor-predicate.py:[[@LINE-2]]:12: error: the program raises RuntimeError: Expected carried_inputs and body outputs to have same metadata but found: pair[0] differ in 'dtype'


def body_shape(x):
    return while_loop(lambda h: h.sum() < 10, lambda h: (h.sum(0),), (x,))

# SHAPE: while-loop-tensor-predicate.py:[[@LINE-2]]:12: error: the program raises RuntimeError: Expected carried_inputs and body outputs to have same metadata but found: pair[0] differ in 'shape'


def body_strides(x):
    return while_loop(lambda h: h.sum() < 10, lambda h: ((h.t() + 1).contiguous().t(),), (x,))

# STRIDES: while-loop-tensor-predicate.py:[[@LINE-2]]:12: error: torch while_loop's body_fn returns tensor<f32, [3, 4], [1, 3]> for carried value 0, which is tensor<f32, [3, 4]>; the loop passes each iteration's results to the next


def body_structure(x):
    return while_loop(lambda h, g: h.sum() < 10, lambda h, g: [h * 2], (x, x))

# STRUCTURE: while-loop-tensor-predicate.py:[[@LINE-2]]:12: error: the program raises RuntimeError: torch while_loop's body_fn must return the carried values' structure


def returns_carry(x):
    return while_loop(lambda h, g: h.sum() < 10, lambda h, g: (h * 2, g), (x, x))

# ALIAS: while-loop-tensor-predicate.py:[[@LINE-2]]:12: error: torch while_loop's body_fn returns one of its operands, or a view of one{{.*}}; torch while_loop's results may not alias its operands (return a clone)


def writes_carry(x):
    return while_loop(lambda h: h.sum() < 10, lambda h: (h.mul_(2),), (x,))

# MUTATE: while-loop-tensor-predicate.py:[[@LINE-2]]:12: error: torch while_loop's body_fn writes one of its operands in place (aten::mul_.Tensor){{.*}}; torch while_loop's functions may not mutate their operands


def appends(x, seen):
    def body(h):
        seen.append(1)
        return (h * 2,)

    return while_loop(lambda h: h.sum() < 10, body, (x,))

# EFFECT: while-loop-tensor-predicate.py:[[@LINE-2]]:12: error: torch while_loop's body_fn changes L['seen'] in place at {{.*}}while-loop-tensor-predicate.py:[[@LINE-5]]; the function runs as many times as the graph's loop does (known only when it runs), so it may change nothing that exists before it


def one_input():
    return (torch.randn(3, 4),)


def with_list():
    return (torch.randn(3, 4), [])
