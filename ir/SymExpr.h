//===- SymExpr.h - Symbolic integers over size symbols ---------*- C++ -*-===//
//
// The language sizes, strides, ranges and guards are written in after capture:
// integer constants and named symbols (`s0`, `u1`) combined with `+ - *`,
// floor division, modulo, `min` and `max`, all with Python's integer semantics.
//
// Expressions are immutable and uniqued in a Context, and every operator
// returns a canonical form, so two expressions built from the same arithmetic
// are the same pointer: comparing, hashing and using them as map keys is O(1).
// Canonical means: `+ - *` are expanded into a sum of products with constant
// folding, like terms collected, and operands sorted by a fixed structural
// order; `floordiv`, `mod`, `min`, `max` keep their structure but fold
// constants and take out what divides exactly. The simplifier knows nothing
// about symbol ranges; facts that need them belong to passes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMapInfo.h"
#include "llvm/ADT/FoldingSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/StringSaver.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace dync::ir {

class Context;
struct SymExprStorage;

/// Listed in the order the canonical form sorts expressions of different kinds.
enum class SymKind : uint8_t { Const, Symbol, Mul, Add, FloorDiv, Mod, Min, Max };

/// Values for symbols when evaluating an expression.
using SymbolValues = llvm::StringMap<int64_t>;

/// A handle to a uniqued symbolic integer; cheap to copy, compared by pointer.
/// A default-constructed handle is null and may only be tested and compared.
///
/// Shapes of the canonical form, which every operator below maintains:
///  - Const and Symbol are leaves;
///  - Mul: an optional constant coefficient (never 1 or 0) first, then at least
///    one non-constant factor, none of them Add or Mul, sorted;
///  - Add: at least two operands; terms (a factor product, possibly with a
///    coefficient) sorted by their factors, no two with the same factors, then
///    the constant, if not 0, last;
///  - FloorDiv, Mod: dividend and divisor; a constant divisor is not 1 or -1,
///    and is positive for FloorDiv;
///  - Min, Max: at least two distinct operands, none of the same kind, sorted,
///    at most one constant, last.
/// What cannot be folded is kept as written: a division or modulo by a
/// constant 0, and any operation whose folding would overflow int64.
class SymExpr {
public:
  SymExpr() = default;
  explicit SymExpr(const SymExprStorage* storage) : storage_(storage) {}

  explicit operator bool() const { return storage_ != nullptr; }
  friend bool operator==(SymExpr a, SymExpr b) { return a.storage_ == b.storage_; }
  friend bool operator!=(SymExpr a, SymExpr b) { return a.storage_ != b.storage_; }

  SymKind kind() const;
  Context& context() const;
  const SymExprStorage* storage() const { return storage_; }

  bool isConstant() const { return kind() == SymKind::Const; }
  bool isSymbol() const { return kind() == SymKind::Symbol; }
  /// The value of a Const.
  int64_t constantValue() const;
  /// The name of a Symbol.
  llvm::StringRef symbolName() const;
  /// Operands of the composite kinds; empty for leaves.
  llvm::ArrayRef<SymExpr> operands() const;
  /// 1 for leaves, else 1 + the deepest operand's depth.
  unsigned depth() const;

  // Canonicalizing arithmetic; the result lives in the operands' context.
  friend SymExpr operator+(SymExpr a, SymExpr b);
  friend SymExpr operator-(SymExpr a, SymExpr b);
  friend SymExpr operator*(SymExpr a, SymExpr b);
  friend SymExpr operator-(SymExpr a);
  friend SymExpr operator+(SymExpr a, int64_t b);
  friend SymExpr operator-(SymExpr a, int64_t b);
  friend SymExpr operator*(SymExpr a, int64_t b);
  friend SymExpr operator+(int64_t a, SymExpr b) { return b + a; }
  friend SymExpr operator*(int64_t a, SymExpr b) { return b * a; }
  /// Python's `a // b`: rounds toward negative infinity.
  SymExpr floorDiv(SymExpr divisor) const;
  SymExpr floorDiv(int64_t divisor) const;
  /// Python's `a % b`: the result has the divisor's sign.
  SymExpr mod(SymExpr divisor) const;
  SymExpr mod(int64_t divisor) const;
  static SymExpr min(llvm::ArrayRef<SymExpr> operands);
  static SymExpr max(llvm::ArrayRef<SymExpr> operands);
  static SymExpr min(SymExpr a, SymExpr b) { return min({a, b}); }
  static SymExpr max(SymExpr a, SymExpr b) { return max({a, b}); }

  /// The fixed structural order canonical forms are sorted by: kinds in
  /// SymKind order, constants by value, symbols by name with digit runs
  /// compared as numbers (`s2` < `s10`), composites by operands. Negative,
  /// zero or positive; zero only for the same expression.
  static int compare(SymExpr a, SymExpr b);

  /// Evaluates with Python semantics under \p values. Fails on an unbound
  /// symbol, a division or modulo by zero, or int64 overflow.
  llvm::Expected<int64_t> evaluate(const SymbolValues& values) const;

  /// Calls \p fn once for each occurrence of a symbol, left to right.
  void walkSymbols(llvm::function_ref<void(SymExpr symbol)> fn) const;

  /// Prints the text form, e.g. `2*s0 + (s1 floordiv 2) - 1`; the parser reads
  /// it back as this very expression.
  void print(llvm::raw_ostream& os) const;
  std::string str() const;

private:
  const SymExprStorage* storage_ = nullptr;
};

inline llvm::raw_ostream& operator<<(llvm::raw_ostream& os, SymExpr e) {
  e.print(os);
  return os;
}

/// Uniqued storage behind a SymExpr; allocated by a Context, never freed
/// before it.
struct SymExprStorage : llvm::FoldingSetNode {
  Context* context;
  SymKind kind;
  int64_t value;               // Const
  llvm::StringRef name;        // Symbol; owned by the context
  const SymExpr* operandArray; // composites; owned by the context
  uint32_t numOperands;
  uint32_t depth;

  void Profile(llvm::FoldingSetNodeID& id) const;
};

/// Owns and uniques symbolic integers. Outlives every graph that uses it.
class Context {
public:
  Context() = default;
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  SymExpr constant(int64_t value);
  SymExpr symbol(llvm::StringRef name);

private:
  friend struct SymExprCanonicalizer;
  /// The uniqued node for exactly these operands, without simplification; only
  /// the canonicalizing operators call it, so every node stays canonical.
  SymExpr node(SymKind kind, llvm::ArrayRef<SymExpr> operands);
  SymExpr intern(const llvm::FoldingSetNodeID& id, void* insertPos, SymExprStorage prototype);

  llvm::BumpPtrAllocator allocator_;
  llvm::StringSaver strings_{allocator_};
  llvm::FoldingSet<SymExprStorage> exprs_;
};

} // namespace dync::ir

namespace llvm {
template <> struct DenseMapInfo<dync::ir::SymExpr> {
  static dync::ir::SymExpr getEmptyKey() {
    return dync::ir::SymExpr(DenseMapInfo<const dync::ir::SymExprStorage*>::getEmptyKey());
  }
  static dync::ir::SymExpr getTombstoneKey() {
    return dync::ir::SymExpr(DenseMapInfo<const dync::ir::SymExprStorage*>::getTombstoneKey());
  }
  static unsigned getHashValue(dync::ir::SymExpr e) {
    return DenseMapInfo<const dync::ir::SymExprStorage*>::getHashValue(e.storage());
  }
  static bool isEqual(dync::ir::SymExpr a, dync::ir::SymExpr b) { return a == b; }
};
} // namespace llvm
