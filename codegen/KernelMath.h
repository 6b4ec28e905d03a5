//===- KernelMath.h - Transcendental functions as inline IR -----*- C++ -*-===//
//
// exp, log, tanh and erf for kernels, emitted as straight-line double
// precision arithmetic (range reduction, then a polynomial), with no
// branches and no calls: the loop vectorizer widens them like any other
// arithmetic, and a kernel's object needs no math library. f32 operations
// compute in double and round once, which keeps them within a few ulp of
// the exact result; f64 results are accurate to a few ulp too, except erf
// (docs/kernels.md, "Numerics").
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/IR/IRBuilder.h"

namespace dync::codegen {

/// e^x for a double \p x; NaN stays NaN, overflow gives inf.
llvm::Value* emitExp(llvm::IRBuilder<>& b, llvm::Value* x);
/// The natural logarithm of a double: -inf at 0, NaN below 0.
llvm::Value* emitLog(llvm::IRBuilder<>& b, llvm::Value* x);
/// tanh of a double.
llvm::Value* emitTanh(llvm::IRBuilder<>& b, llvm::Value* x);
/// erf of a double; |x| >= 4 gives +-1 (the exact value differs by less
/// than 1.6e-8 there, and rounds to +-1 in f32).
llvm::Value* emitErf(llvm::IRBuilder<>& b, llvm::Value* x);

} // namespace dync::codegen
