# A float or bool computed from tensor data (item(), float(t), bool(t),
# tolist()) is a graph value of type float or bool, as torch.export keeps an
# unbacked SymFloat or SymBool. An operator takes it where the program
# passed the Python number (codegen wraps it as eager wraps a Python
# scalar), and the program's Python arithmetic on it is one sym:: node per
# operation, in the program's order. The graph returns it as it is.
# RUN: %dync export %s:scaled %s:arithmetic %s:converted %s:flags --emit=graph | FileCheck %s
# RUN: %dync export %s:compared --example compared_inputs --emit=graph | FileCheck %s --check-prefix=COMPARED
import torch


def scaled(x, y):
    s = x.max().item()
    return y / s, s

# CHECK-LABEL: graph @scaled(
# CHECK:       %[[MAX:[0-9]+]] = aten::max.default(%x) : tensor<f32, []>
# CHECK-NEXT:  %[[S:[0-9]+]] = aten::_local_scalar_dense.default(%[[MAX]]) : float
# CHECK-NEXT:  %[[Y:[0-9]+]] = aten::div.Tensor(%y, %[[S]]) : tensor<f16, [4]>
# CHECK-NEXT:  return (%[[Y]], %[[S]])


def arithmetic(x, y):
    s = x.mean().item()
    t = 2.0 * s + 1
    u = (s + 1.0) + 2.0
    return {"t": t, "u": u, "neg": -s, "abs": abs(s), "big": s > 0.5, "ratio": t / u}

# CHECK-LABEL: graph @arithmetic(
# CHECK:       %[[S:[0-9]+]] = aten::_local_scalar_dense.default(%{{[0-9]+}}) : float
# CHECK-NEXT:  %[[M:[0-9]+]] = sym::mul.default(2.0, %[[S]]) : float
# CHECK-NEXT:  %[[T:[0-9]+]] = sym::add.default(%[[M]], 1) : float
# CHECK-NEXT:  %[[A:[0-9]+]] = sym::add.default(%[[S]], 1.0) : float
# CHECK-NEXT:  %[[U:[0-9]+]] = sym::add.default(%[[A]], 2.0) : float
# CHECK-NEXT:  %[[N:[0-9]+]] = sym::neg.default(%[[S]]) : float
# CHECK-NEXT:  %[[B:[0-9]+]] = sym::abs.default(%[[S]]) : float
# CHECK-NEXT:  %[[G:[0-9]+]] = sym::gt.default(%[[S]], 0.5) : bool
# CHECK-NEXT:  %[[R:[0-9]+]] = sym::truediv.default(%[[T]], %[[U]]) : float
# CHECK-NEXT:  return {"t": %[[T]], "u": %[[U]], "neg": %[[N]], "abs": %[[B]], "big": %[[G]], "ratio": %[[R]]}


def converted(x, y):
    # float() of an integer tensor converts its value as eager does.
    return float(x.sum()), float(x.long().sum()), x[:2].tolist()

# CHECK-LABEL: graph @converted(
# CHECK:       aten::_local_scalar_dense.default(%{{[0-9]+}}) : float
# CHECK:       %[[L:[0-9]+]] = aten::_to_copy.default(%{{[0-9]+}}, dtype=f64) : tensor<f64, []>
# CHECK-NEXT:  aten::_local_scalar_dense.default(%[[L]]) : float
# CHECK:       aten::_local_scalar_dense.default(%{{[0-9]+}}) : float
# CHECK:       aten::_local_scalar_dense.default(%{{[0-9]+}}) : float
# CHECK:       return (%{{[0-9]+}}, %{{[0-9]+}}, [%{{[0-9]+}}, %{{[0-9]+}}])


def flags(x, y):
    some = x.gt(0).any().item()
    every = bool((x > 0).all())
    return some, every, x * some, some & every

# CHECK-LABEL: graph @flags(
# CHECK:       %[[SOME:[0-9]+]] = aten::_local_scalar_dense.default(%{{[0-9]+}}) : bool
# CHECK:       %[[EVERY:[0-9]+]] = aten::_local_scalar_dense.default(%{{[0-9]+}}) : bool
# CHECK-NEXT:  %[[P:[0-9]+]] = aten::mul.Tensor(%x, %[[SOME]]) : tensor<f32, [4]>
# CHECK-NEXT:  %[[AND:[0-9]+]] = sym::and.default(%[[SOME]], %[[EVERY]]) : bool
# CHECK-NEXT:  return (%[[SOME]], %[[EVERY]], %[[P]], %[[AND]])


# torch.allclose and torch.equal return a bool read from tensor data: as
# ATen's kernels compute it (isclose, or eq, then all), a graph value. An
# equal of other sizes is False, decided on sizes alone.
def compared(x, y):
    return torch.allclose(x, y, atol=0.1), x.equal(y), torch.equal(x, y[:2])

# COMPARED-LABEL: graph @compared(
# COMPARED:       aten::le.Tensor(
# COMPARED:       %[[ALL:[0-9]+]] = aten::logical_not.default(%{{[0-9]+}}) : tensor<bool, []>
# COMPARED-NEXT:  %[[CLOSE:[0-9]+]] = aten::_local_scalar_dense.default(%[[ALL]]) : bool
# COMPARED-NEXT:  %[[EQ:[0-9]+]] = aten::eq.Tensor(%x, %y) : tensor<bool, [4]>
# COMPARED:       %[[EQUAL:[0-9]+]] = aten::_local_scalar_dense.default(%{{[0-9]+}}) : bool
# COMPARED:       return (%[[CLOSE]], %[[EQUAL]], false)


def compared_inputs():
    return (torch.rand(4), torch.rand(4))


def example_inputs():
    return (torch.rand(4), torch.randn(4, dtype=torch.float16))
