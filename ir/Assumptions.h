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
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/SMLoc.h"

#include <optional>
#include <string>
#include <vector>

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

/// One comparison between two symbolic integers: `s0 mod 4 == 0`.
struct Comparison {
  SymExpr lhs;
  RelationKind kind = RelationKind::Eq;
  SymExpr rhs;

  /// Whether it holds under \p values; fails as SymExpr::evaluate does.
  llvm::Expected<bool> evaluate(const SymbolValues& values) const;
  void print(llvm::raw_ostream& os) const;
};

/// What the graph assumes holds about its symbols: a comparison (`s0 ==
/// 2*s1`, `s0 mod 8 == 0`, `s2 <= 1024`), or, when `alternatives` is not
/// empty, a disjunction of comparisons, at least one of which holds
/// (`(s0 mod 4) == 0 or s0 == 6`). The graph's relations all hold; together
/// they state any boolean combination of comparisons torch decided on
/// (its conjunctive normal form, negations folded into the comparisons).
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
  /// The comparisons after the first one, for a disjunction; printed
  /// `lhs == rhs or a == b`.
  std::vector<Comparison> alternatives = {};

  /// A single comparison, not a disjunction.
  bool isComparison() const { return alternatives.empty(); }
  /// The first comparison, then the alternatives.
  std::vector<Comparison> comparisons() const;
  /// Calls \p fn on every symbol each comparison mentions (repeats
  /// included).
  void walkSymbols(llvm::function_ref<void(SymExpr)> fn) const;
  /// Whether every side of every comparison is a constant.
  bool isConstant() const;
  /// Whether it holds under \p values: some comparison holds. Fails as
  /// SymExpr::evaluate does when none holds and one cannot be evaluated.
  llvm::Expected<bool> evaluate(const SymbolValues& values) const;
  void print(llvm::raw_ostream& os) const;
};

/// Whether \p expr mentions a symbol \p symbols declares unbacked.
bool mentionsUnbacked(SymExpr expr, llvm::ArrayRef<SymbolDecl> symbols);
/// Whether \p relation mentions a symbol \p symbols declares unbacked: such a
/// relation is checked by the graph when it runs, not by its guards.
bool mentionsUnbacked(const Relation& relation, llvm::ArrayRef<SymbolDecl> symbols);

} // namespace dync::ir
