//===- Assumptions.h - What a graph assumes about its symbols --*- C++ -*-===//
//
// A graph is valid only for sizes within the ranges of its symbols and that
// satisfy its relations. These are the facts capture relied on; the guards
// compiled into an artifact check exactly them before running the graph.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/SymExpr.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/SMLoc.h"

#include <optional>
#include <string>

namespace dync::ir {

/// Inclusive bounds `[lo, hi]`; a missing bound is unbounded (`-inf`, `inf`).
struct SymbolRange {
  std::optional<int64_t> lo;
  std::optional<int64_t> hi;

  bool contains(int64_t value) const { return (!lo || *lo <= value) && (!hi || value <= *hi); }
  /// `[1, 1024]`, `[2, inf]`, `[-inf, 0]`.
  void print(llvm::raw_ostream& os) const;

  friend bool operator==(const SymbolRange&, const SymbolRange&) = default;
};

/// A symbol a graph's sizes may mention, with the values it may take.
struct SymbolDecl {
  std::string name;
  SymbolRange range;
  /// Where it was declared, when parsed from text.
  llvm::SMLoc loc;
  /// For a captured graph, what narrowed the range below the one declared
  /// (`batch < 16 by torch.conv2d at model.py:20`); messages only, not
  /// part of the text form.
  std::string origin = {};
  /// A data-dependent value (torch's *unbacked* symbol): no input binds it;
  /// the graph computes it, as a whole dimension or an `int<u0>` result of a
  /// node (`nonzero`, `item`), and checks its range and the relations that
  /// mention it when it runs, right after that node. Printed `u0: [0, inf]
  /// unbacked`.
  bool unbacked = false;
};

enum class RelationKind : uint8_t { Eq, Ne, Lt, Le, Gt, Ge };

/// `==`, `!=`, `<`, `<=`, `>`, `>=`.
llvm::StringRef spelling(RelationKind kind);

/// A comparison between two symbolic integers that the graph assumes holds:
/// `s0 == 2*s1`, `s0 mod 8 == 0`, `s2 <= 1024`.
struct Relation {
  SymExpr lhs;
  RelationKind kind = RelationKind::Eq;
  SymExpr rhs;
  /// Where it was written, when parsed from text.
  llvm::SMLoc loc;
  /// For a captured graph, what made the program assume it (` by
  /// torch.Tensor.__getitem__ at model.py:14`); messages only, not part of
  /// the text form.
  std::string origin = {};

  /// Whether it holds under \p values; fails as SymExpr::evaluate does.
  llvm::Expected<bool> evaluate(const SymbolValues& values) const;
  void print(llvm::raw_ostream& os) const;
};

/// Whether \p expr mentions a symbol \p symbols declares unbacked.
bool mentionsUnbacked(SymExpr expr, llvm::ArrayRef<SymbolDecl> symbols);
/// Whether \p relation mentions a symbol \p symbols declares unbacked: such a
/// relation is checked by the graph when it runs, not by its guards.
bool mentionsUnbacked(const Relation& relation, llvm::ArrayRef<SymbolDecl> symbols);

} // namespace dync::ir
