//===- KernelMath.h - Transcendental functions as inline IR -----*- C++ -*-===//
//
// exp, log, tanh, erf and GELU for kernels, emitted as straight-line arithmetic
// (range reduction, then a polynomial), with no branches and no calls: the
// loop vectorizer widens them like any other arithmetic, and a kernel's
// object needs no math library.
//
// Each function computes in the type of its argument, float or double, with
// a polynomial sized for that type's precision: an f32 kernel stays f32 and
// gets twice the vector lanes of double. Results are within a few ulp of
// the exact value in either type (docs/kernels.md, "Numerics").
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/ValueRange.h"

#include "llvm/IR/IRBuilder.h"

namespace dync::codegen {

/// e^x for a float or double \p x; NaN stays NaN, overflow gives inf.
/// \p range bounds x (NaN aside): the clamps no x in it reaches are left
/// out, and so is the scaling in two steps when every result is normal.
llvm::Value* emitExp(llvm::IRBuilder<>& b, llvm::Value* x, ValueRange range = ValueRange::all());
/// The natural logarithm of a float or double: -inf at 0, NaN below 0.
llvm::Value* emitLog(llvm::IRBuilder<>& b, llvm::Value* x);
/// tanh of a float or double; \p range bounds x, as for emitExp.
llvm::Value* emitTanh(llvm::IRBuilder<>& b, llvm::Value* x, ValueRange range = ValueRange::all());
/// 1 / (1 + e^-x) of a float or double; \p range bounds x.
llvm::Value* emitSigmoid(llvm::IRBuilder<>& b, llvm::Value* x,
                         ValueRange range = ValueRange::all());
/// erf of a float or double; |x| >= 4 gives +-1 (the exact value differs
/// by less than 1.6e-8 there, and rounds to +-1 in f32).
llvm::Value* emitErf(llvm::IRBuilder<>& b, llvm::Value* x);
/// GELU of a float or double as ATen computes it, x / 2 (1 + erf(x / sqrt
/// 2)): on the negative side the cancellation is eager's too, down to the
/// -0.0 it gives once 1 + erf rounds to 0.
llvm::Value* emitGelu(llvm::IRBuilder<>& b, llvm::Value* x);

} // namespace dync::codegen
