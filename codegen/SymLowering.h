//===- SymLowering.h - Symbolic sizes to LLVM IR ----------------*- C++ -*-===//
//
// One lowering of ir::SymExpr to i64 arithmetic, with Python's integer
// semantics (floor division and a remainder that takes the divisor's sign),
// shared by graph functions, guard functions and kernels. They differ only in
// what they may assume, which a SymLowering is told when made:
//
//  - graph functions run after the guards checked every symbol's range, so
//    their arithmetic wraps and only a zero divisor is reported;
//  - guards run on arbitrary inputs: every operation that does not fit int64
//    and every zero divisor is a miss (where SymExpr::evaluate fails too);
//  - kernels run after their graph function computed the same sizes, so
//    their arithmetic does not wrap (nsw) and a zero divisor is only made
//    safe, never reported.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Assumptions.h"
#include "ir/SymExpr.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/Support/Error.h"

namespace dync::codegen {

/// What a run-time check of a size computation guards against.
enum class SymCheck { DivisionByZero, Overflow };

class SymLowering {
public:
  /// How additions and multiplications treat int64 overflow.
  enum class Arithmetic {
    /// Two's complement wrap-around: the values were proven in range.
    Wrapping,
    /// `nsw`: overflow cannot happen, and LLVM may rely on it.
    NoSignedWrap,
    /// Checked at run time through Hooks::require, as is INT64_MIN // -1.
    Checked,
  };

  /// What the lowering asks of the function it emits into.
  class Hooks {
  public:
    virtual ~Hooks() = default;
    /// The i64 value of the symbol \p symbol at this point, or an error
    /// naming why it cannot be read.
    virtual llvm::Expected<llvm::Value*> symbol(ir::SymExpr symbol) = 0;
    /// Emits a check that continues when \p holds (an i1) is true and fails
    /// otherwise, reporting \p check while computing \p expr.
    virtual void require(llvm::IRBuilder<>& b, llvm::Value* holds, SymCheck check,
                         ir::SymExpr expr) = 0;
  };

  /// \p checkDivisor: a divisor that may be zero is checked through
  /// Hooks::require; otherwise it is replaced by 1 (the result is then
  /// meaningless, but nothing traps).
  SymLowering(Arithmetic arithmetic, bool checkDivisor, Hooks& hooks)
      : arithmetic_(arithmetic), checkDivisor_(checkDivisor), hooks_(hooks) {}

  /// The value of \p expr, emitted at \p b's insertion point the first time
  /// it is asked for; later requests reuse it, so the first must dominate
  /// them.
  llvm::Expected<llvm::Value*> lower(llvm::IRBuilder<>& b, ir::SymExpr expr);

private:
  llvm::Value* combine(llvm::IRBuilder<>& b, ir::SymExpr expr, llvm::Value* lhs, llvm::Value* rhs);
  llvm::Value* divide(llvm::IRBuilder<>& b, ir::SymExpr expr, llvm::Value* a, llvm::Value* d);

  Arithmetic arithmetic_;
  bool checkDivisor_;
  Hooks& hooks_;
  llvm::DenseMap<ir::SymExpr, llvm::Value*> values_;
};

/// The i1 that \p relation holds: each comparison of its sides (signed,
/// as \p side emits them) or'ed with the next, for a disjunction.
llvm::Expected<llvm::Value*>
lowerRelation(llvm::IRBuilder<>& b, const ir::Relation& relation,
              llvm::function_ref<llvm::Expected<llvm::Value*>(ir::SymExpr)> side);

} // namespace dync::codegen
