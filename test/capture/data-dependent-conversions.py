# int() of a floating-point tensor, int() and float() of a complex one,
# divmod, round(s, n) and round(k, n), len() of a tensor whose length comes
# from tensor data, and `**` and `& | ^` of a bool from tensor data with an
# int. round(s, n) of a float is a float node, round(k, n) of an int an int
# node (k itself for n >= 0). int(t) is item() and a sym::int node, as int()
# of the float item() gives; of a complex tensor, of its real part after a
# check raising eager's RuntimeError. divmod(a, b) is Python's (a // b,
# a % b), one node each, `.divmod` nodes with a float (raising "float
# divmod()" for a zero divisor);
# len() of `x[mask]` or `x.nonzero()` is its unbacked symbol; a bool with an
# int gives an int, a fresh symbol its node computes. What is still refused
# stops at its line in plain words.
# RUN: %dync export %s:truncated %s:divided %s:lengths %s:flags %s:rounded %s:rounded_int %s:complex_int %s:complex_float --emit=graph | FileCheck %s
# Each refused program is an entry of one export that goes on past each
# refusal, and each refusal is reported at its line, in entry order.
# RUN: not %dync export %s:symbolic_digits %s:symbolic_power %s:float_and %s:zero_dim_len \
# RUN:   --keep-going --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefixes=DIGITS,POWER,FLOATAND,ZERODIM
import torch


def truncated(x):
    k = int(x.sum())
    return k, x * k

# CHECK-LABEL: graph @truncated(
# CHECK:       %[[S:[0-9]+]] = aten::_local_scalar_dense.default(%{{[0-9]+}}) : float
# CHECK-NEXT:  %{{[0-9]+}} = sym::int.default(%[[S]]) : int<u0>
# CHECK-NEXT:  %[[M:[0-9]+]] = aten::mul.Tensor(%x, u0)
# CHECK-NEXT:  return (u0, %[[M]])


def divided(x):
    s = x.max().item()
    n = (x * 10).long().sum().item()
    return divmod(s, 0.3), divmod(n, 4), divmod(7.5, s)

# CHECK-LABEL: graph @divided(
# CHECK:       %[[S:[0-9]+]] = aten::_local_scalar_dense.default(%{{[0-9]+}}) : float
# CHECK:       aten::_local_scalar_dense.default(%{{[0-9]+}}) : int<u0>
# CHECK-NEXT:  %[[Q:[0-9]+]] = sym::floordiv.divmod(%[[S]], 0.3) : float
# CHECK-NEXT:  %[[R:[0-9]+]] = sym::mod.divmod(%[[S]], 0.3) : float
# CHECK-NEXT:  %[[Q2:[0-9]+]] = sym::floordiv.divmod(7.5, %[[S]]) : float
# CHECK-NEXT:  %[[R2:[0-9]+]] = sym::mod.divmod(7.5, %[[S]]) : float
# CHECK-NEXT:  return ((%[[Q]], %[[R]]), (u0 floordiv 4, u0 mod 4), (%[[Q2]], %[[R2]]))


def lengths(x):
    picked = x[x > 0.5]
    return len(picked), len(x.nonzero()), picked.sum() * len(picked)

# CHECK-LABEL: graph @lengths(
# CHECK-NEXT:  symbols { u0: [0, 4] unbacked, u1: [0, 4] unbacked } {
# CHECK:       %[[P:[0-9]+]] = aten::index.Tensor(%x, [%{{[0-9]+}}]) : tensor<f32, [u0]>
# CHECK-NEXT:  %[[N:[0-9]+]] = aten::nonzero.default(%x) : tensor<i64, [u1, 1], [1, u1]>
# CHECK-NEXT:  %[[SUM:[0-9]+]] = aten::sum.dim_IntList(%[[P]], [])
# CHECK-NEXT:  %[[M:[0-9]+]] = aten::mul.Tensor(%[[SUM]], u0)
# CHECK-NEXT:  %{{[0-9]+}} = aten::sym_size.int(%[[P]], 0) : int<u0>
# CHECK-NEXT:  %{{[0-9]+}} = aten::sym_size.int(%[[N]], 0) : int<u1>
# CHECK-NEXT:  return (u0, u1, %[[M]])


def flags(x):
    a = (x > 0).any().item()
    return a ** 2, 2 ** a, a & 1, 3 | a, a ^ 1

# CHECK-LABEL: graph @flags(
# CHECK:       %[[A:[0-9]+]] = aten::_local_scalar_dense.default(%{{[0-9]+}}) : bool
# CHECK-NEXT:  %{{[0-9]+}} = sym::pow.default(%[[A]], 2) : int<[[P:u[0-9]+]]>
# CHECK-NEXT:  %{{[0-9]+}} = sym::pow.default(2, %[[A]]) : int<[[Q:u[0-9]+]]>
# CHECK-NEXT:  %{{[0-9]+}} = sym::and.default(%[[A]], 1) : int<[[R:u[0-9]+]]>
# CHECK-NEXT:  %{{[0-9]+}} = sym::or.default(3, %[[A]]) : int<[[S:u[0-9]+]]>
# CHECK-NEXT:  %{{[0-9]+}} = sym::xor.default(%[[A]], 1) : int<[[T:u[0-9]+]]>
# CHECK-NEXT:  return ([[P]], [[Q]], [[R]], [[S]], [[T]])


def rounded(x):
    s = x.max().item()
    return round(s, 2), round(s, -1), round(s, None)

# CHECK-LABEL: graph @rounded(
# CHECK:       %[[S:[0-9]+]] = aten::_local_scalar_dense.default(%{{[0-9]+}}) : float
# CHECK-NEXT:  %[[A:[0-9]+]] = sym::round.default(%[[S]], 2) : float
# CHECK-NEXT:  %[[B:[0-9]+]] = sym::round.default(%[[S]], -1) : float
# CHECK-NEXT:  %{{[0-9]+}} = sym::round.default(%[[S]]) : int<[[U:u[0-9]+]]>
# CHECK-NEXT:  return (%[[A]], %[[B]], [[U]])


def rounded_int(x):
    k = (x * 100).long().sum().item()
    return round(k, -1), round(k, 2), round(k, -25)

# CHECK-LABEL: graph @rounded_int(
# CHECK:       aten::_local_scalar_dense.default(%{{[0-9]+}}) : int<u0>
# CHECK-NEXT:  %{{[0-9]+}} = sym::round.default(u0, -1) : int<[[A:u[0-9]+]]>
# CHECK-NEXT:  %{{[0-9]+}} = sym::round.default(u0, -25) : int<[[B:u[0-9]+]]>
# CHECK-NEXT:  return ([[A]], u0, [[B]])


def complex_int(x):
    return int(torch.view_as_complex(x.view(2, 2))[0])

# CHECK-LABEL: graph @complex_int(
# CHECK:       %[[C:[0-9]+]] = aten::select.int(%{{[0-9]+}}, 0, 0) : tensor<c64, []>
# CHECK:       aten::eq.Scalar(%{{[0-9]+}}, 0) : tensor<bool, []>
# CHECK:       aten::ge.Scalar(%{{[0-9]+}}, -9.223372036854776e+18) : tensor<bool, []>
# CHECK:       aten::le.Scalar(%{{[0-9]+}}, 9.223372036854776e+18) : tensor<bool, []>
# CHECK-NEXT:  %[[OK:[0-9]+]] = aten::bitwise_and.Tensor(
# CHECK-NEXT:  %{{[0-9]+}} = aten::_assert_async.msg(%[[OK]], "RuntimeError: value cannot be converted to type int64_t without overflow") : none
# CHECK:       %[[S:[0-9]+]] = aten::_local_scalar_dense.default(%{{[0-9]+}}) : float
# CHECK-NEXT:  %{{[0-9]+}} = sym::int.default(%[[S]]) : int<[[U:u[0-9]+]]>
# CHECK-NEXT:  return [[U]]


def complex_float(x):
    return float(torch.view_as_complex(x.view(2, 2))[1])

# CHECK-LABEL: graph @complex_float(
# CHECK:       %[[OK:[0-9]+]] = aten::eq.Scalar(%{{[0-9]+}}, 0) : tensor<bool, []>
# CHECK-NEXT:  %{{[0-9]+}} = aten::_assert_async.msg(%[[OK]], "RuntimeError: value cannot be converted to type double without overflow") : none
# CHECK:       %[[S:[0-9]+]] = aten::_local_scalar_dense.default(%{{[0-9]+}}) : float
# CHECK-NEXT:  return %[[S]]


def symbolic_digits(x):
    k = x.long().sum().item()
    return round(k, k)

# DIGITS: data-dependent-conversions.py:[[@LINE-2]]:12: error: round() with a number of digits is an operation graphs compute for a float or an int computed from tensor data and a constant int number of digits only (round(x, 2), round(k, -1))


def symbolic_power(x):
    a = (x > 0).any().item()
    n = x.long().sum().item()
    return a ** n

# POWER: data-dependent-conversions.py:[[@LINE-2]]:12: error: pow of a bool computed from tensor data to a symbolic int power is not an operation graphs compute yet: whether Python's result is an int or a float depends on the exponent's sign


def float_and(x):
    a = (x > 0).any().item()
    return a & 1.5

# FLOATAND: data-dependent-conversions.py:[[@LINE-2]]:12: error: {{.*}}TypeError: unsupported operand type(s) for &: 'bool' and 'float'


def zero_dim_len(x):
    return len(x.sum())

# ZERODIM: data-dependent-conversions.py:[[@LINE-2]]:12: error: {{.*}}TypeError: len() of a 0-d tensor


def example_inputs():
    return (torch.rand(4),)
