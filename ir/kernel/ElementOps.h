//===- ElementOps.h - What one element of a kernel node computes -*- C++ -*-===//
//
// The lowering table of kernels: each ATen overload a kernel may hold, read
// into a dtype-free description of one element (or one reduction) of its
// result: an element operation, its operands (tensor values or numbers) and,
// for reductions, the reduced dimensions. This is the only place that reads
// ATen argument conventions for kernels (alpha, rounding modes, gelu's
// approximation, reduction dims, keepdim); kernelOpClass() accepts exactly
// what describeElement() describes, and kernel codegen lowers every
// ElementOp, so the three cannot drift apart.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Argument.h"
#include "ir/kernel/KernelOps.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <optional>

namespace dync::ir {

/// What one element computes, in the compute dtype codegen picks from the
/// node's types (docs/kernels.md, "Numerics").
enum class ElementOp : uint8_t {
  // Arithmetic on operands converted to the result dtype.
  Add,      // a + alpha * b (alpha is operand 2)
  Sub,      // a - alpha * b (alpha is operand 2)
  Mul,      // a * b
  Div,      // a / b, true division
  DivTrunc, // trunc(a / b)
  Neg,
  Abs,
  Reciprocal,
  Square,
  Sqrt,
  Rsqrt,
  Exp,
  Log,
  Sigmoid,
  Tanh,
  Erf,
  Relu,
  Gelu,     // 0.5 x (1 + erf(x / sqrt 2))
  GeluTanh, // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
  Maximum,  // NaN-propagating
  Minimum,  // NaN-propagating
  Clamp,    // min(max(a, lo), hi), NaN-propagating; a bound may be absent
  Where,    // cond ? a : b
  // Comparisons, in the operands' common dtype; the result is bool.
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  // Logical: operands are tested against zero; the result is bool.
  LogicalAnd,
  LogicalOr,
  LogicalXor,
  LogicalNot,
  // Converts to the result dtype (_to_copy with only a dtype).
  Convert,
  // Reductions over the reduced dimensions of operand 0.
  Sum,
  Mean,
  Amax,
  Amin,
};

llvm::StringRef spelling(ElementOp op);
bool isReduction(ElementOp op);
bool isComparison(ElementOp op);
bool isLogical(ElementOp op);

/// One operand of an element: a tensor value of the graph, a number
/// written in the node (a Python scalar; an int may be symbolic), or absent
/// (a clamp bound given as `none`).
struct ElementOperand {
  enum class Kind : uint8_t { Tensor, Float, Int, Bool, Absent };
  Kind kind = Kind::Tensor;
  ValueRef value;
  double floatValue = 0;
  SymExpr intValue;
  bool boolValue = false;

  static ElementOperand tensor(ValueRef value);
  static ElementOperand floating(double value);
  static ElementOperand integer(SymExpr value);
  static ElementOperand boolean(bool value);
  static ElementOperand absent();
  bool isTensor() const { return kind == Kind::Tensor; }
};

/// A node read as one element computation.
struct ElementDescription {
  KernelOpClass opClass = KernelOpClass::None;
  ElementOp op = ElementOp::Add;
  llvm::SmallVector<ElementOperand, 3> operands;
  /// Reductions: the reduced dimensions of operand 0, normalized to
  /// [0, rank), sorted, distinct; every dimension for `dim=[]`/`none`.
  llvm::SmallVector<unsigned, 4> reducedDims;
  bool keepDim = false;
};

/// The element description of \p node, or an error saying why a kernel
/// cannot compute it (unknown overload, a dtype or device kernels do not
/// lower, an argument form not supported).
llvm::Expected<ElementDescription> describeElement(const Node& node);

/// The dtypes kernels load, compute and store (bf16 and f16 compute in
/// f32, rounded after each node).
bool isKernelDType(DType dtype);

/// Every overload describeElement() may accept, for tests that check each
/// one against torch's tags.
llvm::ArrayRef<llvm::StringRef> kernelOverloads();

} // namespace dync::ir
