# Python's other operations on numbers computed from tensor data, as
# torch.export keeps them on unbacked SymFloats and SymInts: `**`, `//`, `%`,
# int(), round(), and math.trunc, floor, ceil, sqrt, exp and log are one
# sym:: node each, in the program's order. An operation whose Python
# result is an int gives a fresh unbacked symbol the node computes (`u1`),
# which later sizes and the return use as item()'s `u0`. A data-dependent
# size returned as an int (a nonzero count) is read with aten::sym_size.int.
# RUN: %dync export %s:powers %s:converted %s:maths %s:ints %s:counted %s:flags --emit=graph | FileCheck %s
import math

import torch


def powers(x):
    s = x.max().item()
    return x * s ** 0.5, s // 0.25, s % 0.3, 2.0 ** s

# CHECK-LABEL: graph @powers(
# CHECK:       %[[S:[0-9]+]] = aten::_local_scalar_dense.default(%{{[0-9]+}}) : float
# CHECK-NEXT:  %[[P:[0-9]+]] = sym::pow.default(%[[S]], 0.5) : float
# CHECK-NEXT:  %[[M:[0-9]+]] = aten::mul.Tensor(%x, %[[P]]) : tensor<f32, [4]>
# CHECK-NEXT:  %[[F:[0-9]+]] = sym::floordiv.default(%[[S]], 0.25) : float
# CHECK-NEXT:  %[[R:[0-9]+]] = sym::mod.default(%[[S]], 0.3) : float
# CHECK-NEXT:  %[[E:[0-9]+]] = sym::pow.default(2.0, %[[S]]) : float
# CHECK-NEXT:  return (%[[M]], %[[F]], %[[R]], %[[E]])


def converted(x):
    s = x.max().item() * 10
    k = int(s)
    torch._check(k >= 0)
    torch._check(k <= 10)
    return torch.arange(k), round(s), math.trunc(s), k + 1

# CHECK-LABEL: graph @converted(
# CHECK-NEXT:  symbols { u0: [0, 10] unbacked, u1: [-inf, inf] unbacked, u2: [-inf, inf] unbacked } {
# CHECK:       %[[S:[0-9]+]] = sym::mul.default(%{{[0-9]+}}, 10) : float
# CHECK-NEXT:  %[[K:[0-9]+]] = sym::int.default(%[[S]]) : int<u0>
# CHECK-NEXT:  %{{[0-9]+}} = aten::arange.start_step(0, u0, {{.*}}) : tensor<i64, [u0]>
# CHECK-NEXT:  %[[A:[0-9]+]] = aten::alias.default(%{{[0-9]+}}) : tensor<i64, [u0]>
# CHECK-NEXT:  %{{[0-9]+}} = sym::round.default(%[[S]]) : int<u1>
# CHECK-NEXT:  %{{[0-9]+}} = sym::int.default(%[[S]]) : int<u2>
# CHECK-NEXT:  return (%[[A]], u1, u2, u0 + 1)


def maths(x):
    s = x.sum().item()
    return math.sqrt(s), math.exp(s), math.log(s), math.floor(s), math.ceil(s)

# CHECK-LABEL: graph @maths(
# CHECK:       %[[S:[0-9]+]] = aten::_local_scalar_dense.default(%{{[0-9]+}}) : float
# CHECK-NEXT:  %[[Q:[0-9]+]] = sym::sqrt.default(%[[S]]) : float
# CHECK-NEXT:  %[[E:[0-9]+]] = sym::exp.default(%[[S]]) : float
# CHECK-NEXT:  %[[L:[0-9]+]] = sym::log.default(%[[S]]) : float
# CHECK-NEXT:  %{{[0-9]+}} = sym::floor.default(%[[S]]) : int<u0>
# CHECK-NEXT:  %{{[0-9]+}} = sym::ceil.default(%[[S]]) : int<u1>
# CHECK-NEXT:  return (%[[Q]], %[[E]], %[[L]], u0, u1)


def ints(x):
    # An int from item() keeps its arithmetic in the symbolic integers;
    # a power that makes a float, float() and abs() are nodes.
    n = (x * 10).long().sum().item()
    return n // 2, n % 3, -n // 4, n ** 2, n ** -1, n ** 0.5, float(n), abs(n), int(n)

# CHECK-LABEL: graph @ints(
# CHECK:       aten::_local_scalar_dense.default(%{{[0-9]+}}) : int<u0>
# CHECK-NEXT:  %[[I:[0-9]+]] = sym::pow.default(u0, -1) : float
# CHECK-NEXT:  %[[H:[0-9]+]] = sym::pow.default(u0, 0.5) : float
# CHECK-NEXT:  %[[F:[0-9]+]] = sym::float.default(u0) : float
# CHECK-NEXT:  %{{[0-9]+}} = sym::abs.default(u0) : int<u1>
# CHECK-NEXT:  return (u0 floordiv 2, u0 mod 3, -u0 floordiv 4, u0*u0, %[[I]], %[[H]], %[[F]], u1, u0)


def counted(x):
    idx = x.nonzero()
    picked = x[x > 0.5]
    return idx, idx.shape[0], picked.size(0) * 2 + 1

# CHECK-LABEL: graph @counted(
# CHECK:       %[[NZ:[0-9]+]] = aten::nonzero.default(%x) : tensor<i64, [u0, 1], [1, u0]>
# CHECK:       %[[PICKED:[0-9]+]] = aten::index.Tensor(%x, [%{{[0-9]+}}]) : tensor<f32, [u1]>
# CHECK-NEXT:  %{{[0-9]+}} = aten::sym_size.int(%[[NZ]], 0) : int<u0>
# CHECK-NEXT:  %{{[0-9]+}} = aten::sym_size.int(%[[PICKED]], 0) : int<u1>
# CHECK-NEXT:  return (%[[NZ]], u0, 2*u1 + 1)


def flags(x):
    # Arithmetic on bools gives ints, as in Python.
    a = (x > 0).any().item()
    b = (x > 1).all().item()
    return a + b, a * 3, -a

# CHECK-LABEL: graph @flags(
# CHECK:       %[[A:[0-9]+]] = aten::_local_scalar_dense.default(%{{[0-9]+}}) : bool
# CHECK:       %[[B:[0-9]+]] = aten::_local_scalar_dense.default(%{{[0-9]+}}) : bool
# CHECK-NEXT:  %{{[0-9]+}} = sym::add.default(%[[A]], %[[B]]) : int<[[U:u[0-9]+]]>
# CHECK-NEXT:  %{{[0-9]+}} = sym::mul.default(%[[A]], 3) : int<[[V:u[0-9]+]]>
# CHECK-NEXT:  %{{[0-9]+}} = sym::neg.default(%[[A]]) : int<[[W:u[0-9]+]]>
# CHECK-NEXT:  return ([[U]], [[V]], [[W]])


def example_inputs():
    return (torch.rand(4),)
