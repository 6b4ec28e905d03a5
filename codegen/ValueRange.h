//===- ValueRange.h - Bounds on the values a kernel element takes -*- C++ -*-===//
//
// Interval analysis over a kernel's elements, done while they are lowered:
// each value carries bounds that every non-NaN value it may take lies
// within, from its operands' bounds and the operation's meaning (tanh lies
// in [-1, 1], exp of that in [1/e, e]). The transcendental functions read
// their argument's bounds to leave out what cannot happen: a clamp no
// argument reaches, the two-step scaling only subnormal results need. NaN
// is not tracked: every value may be NaN, and the functions keep handling
// it as before.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/kernel/ElementOps.h"

#include "llvm/ADT/ArrayRef.h"

#include <limits>
#include <optional>

namespace dync::codegen {

struct ValueRange {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();

  static ValueRange all() { return {}; }
  static ValueRange point(double v) { return {v, v}; }
  /// Whether every value lies in [a, b].
  bool within(double a, double b) const { return lo >= a && hi <= b; }
  /// The largest magnitude a value may have.
  double maxMagnitude() const;
  friend bool operator==(const ValueRange&, const ValueRange&) = default;
};

/// The bounds of \p op's result from its operands' (nullopt for an absent
/// operand), computed in double and widened by a margin that covers the
/// rounding of f32 and f64 arithmetic and the few ulp of the kernel's own
/// transcendental functions. A result in bf16 or f16, rounded far coarser,
/// is unbounded, and so is anything without a rule.
ValueRange resultRange(ir::ElementOp op, llvm::ArrayRef<std::optional<ValueRange>> operands,
                       ir::DType result);

} // namespace dync::codegen
