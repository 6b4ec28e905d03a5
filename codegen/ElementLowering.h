//===- ElementLowering.h - One element of a kernel node in LLVM IR -*- C++ -*-===//
//
// The codegen half of the kernel lowering table (ir/kernel/ElementOps.h):
// each ElementOp as scalar LLVM IR on values already loaded, and the
// accumulators of reductions. Values are in their compute form: float,
// double, i32, i64, or i1 for bool (stored as one byte). bf16 and f16
// values are floats holding a value the dtype represents exactly (stored
// as 16 bits): loads widen exactly, and every node whose result is bf16 or
// f16 computes in f32 and rounds, as eager ATen does per operator.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/ValueRange.h"
#include "ir/kernel/ElementOps.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/Support/Error.h"

#include <optional>

namespace dync::codegen {

/// A scalar value, the dtype it holds, and bounds on what it may be.
struct TypedValue {
  llvm::Value* value = nullptr;
  ir::DType dtype = ir::DType::F32;
  ValueRange range;
};

/// The register type of \p dtype: i1 for bool, float for bf16 and f16.
llvm::Type* computeType(llvm::LLVMContext& ctx, ir::DType dtype);
/// The in-memory element type of \p dtype: i8 for bool, i16 for bf16 and
/// f16.
llvm::Type* storageType(llvm::LLVMContext& ctx, ir::DType dtype);
/// Whether \p dtype is bf16 or f16: computed in f32, rounded per node.
bool isReducedFloat(ir::DType dtype);

/// A value loaded as storageType(\p dtype) in its compute form.
llvm::Value* fromStorage(llvm::IRBuilder<>& b, llvm::Value* loaded, ir::DType dtype);
/// \p v in its storage form (its dtype's storageType).
llvm::Value* toStorage(llvm::IRBuilder<>& b, TypedValue v);

/// \p v converted to \p to as torch's casts do (bool is `!= 0`, NaN true;
/// float to int truncates, saturating where C++ leaves it undefined).
llvm::Value* convert(llvm::IRBuilder<>& b, TypedValue v, ir::DType to);

/// One element of \p op on \p operands (absent operands are nullopt),
/// giving a value of dtype \p result, with the bounds resultRange() gives;
/// exp, tanh and sigmoid use their argument's bounds (ValueRange.h). Arithmetic computes in the
/// result dtype, comparisons in their first operand's, transcendental functions in the result dtype
/// too (KernelMath.h). Reductions are not elements: see below.
llvm::Expected<TypedValue> lowerElement(llvm::IRBuilder<>& b, ir::ElementOp op,
                                        llvm::ArrayRef<std::optional<TypedValue>> operands,
                                        ir::DType result);

/// The dtype a reduction accumulates in for result dtype \p result: f64 for
/// float sums and means (see docs/kernels.md), the result dtype otherwise.
ir::DType accumulatorDType(ir::ElementOp op, ir::DType result);
/// The accumulator's starting value: 0, -inf / the smallest integer for
/// amax, +inf / the largest for amin.
llvm::Value* reductionInit(llvm::IRBuilder<>& b, ir::ElementOp op, ir::DType accumulator);
/// acc combined with \p element (already converted to the accumulator's
/// dtype). Float sums are marked reassociable so the vectorizer keeps
/// per-lane partial sums; amax/amin propagate NaN as torch does.
llvm::Value* reductionCombine(llvm::IRBuilder<>& b, ir::ElementOp op, ir::DType accumulator,
                              llvm::Value* acc, llvm::Value* element);

} // namespace dync::codegen
