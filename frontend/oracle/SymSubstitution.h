//===- SymSubstitution.h - Replacing symbols in a graph --------*- C++ -*-===//
//
// Capture may learn that a symbol equals an expression over others (torch's
// ShapeEnv records this as a replacement when a guard equates two sizes).
// Nodes built before that still mention the old symbol; this rewrites them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

namespace dync::oracle {

/// Rewrites symbolic integers with symbols replaced by expressions, keeping
/// canonical form. Remembers what it rewrote, so shared subexpressions are
/// rebuilt once.
class SymSubstitution {
public:
  explicit SymSubstitution(llvm::StringMap<ir::SymExpr> replacements)
      : replacements_(std::move(replacements)) {}

  bool empty() const { return replacements_.empty(); }

  ir::SymExpr apply(ir::SymExpr expr);
  ir::Type apply(const ir::Type& type);
  void apply(ir::Argument& argument);
  /// Every type, argument and relation of \p graph.
  void apply(ir::Graph& graph);

private:
  llvm::StringMap<ir::SymExpr> replacements_;
  llvm::DenseMap<ir::SymExpr, ir::SymExpr> done_;
};

} // namespace dync::oracle
