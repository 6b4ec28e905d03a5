//===- RangeSpecializations.cpp - Sizes a graph leaves out of its ranges --===//
#include "compiler/RangeSpecializations.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace dync::compiler {

std::vector<UncoveredSize> uncoveredSizes(const ir::Graph& graph,
                                          const std::vector<capture::DynamicSpec>& specs,
                                          const SizePoint& at) {
  std::vector<UncoveredSize> uncovered;
  llvm::StringSet<> seen;
  auto add = [&](const capture::DynamicSpec& spec, int64_t size, std::string why) {
    SizePoint point = at;
    point[spec.symbol] = size;
    for (const UncoveredSize& known : uncovered)
      if (known.point == point)
        return;
    uncovered.push_back({std::move(point), spec.text, spec.symbol, size, std::move(why)});
  };
  for (const capture::DynamicSpec& spec : specs) {
    if (!seen.insert(spec.symbol).second)
      continue;
    // A symbol this graph was captured at a size of 0 or 1 is that
    // constant; one torch pinned is no longer declared. Either way the
    // graph serves one size of it, and the caller chose which.
    const ir::SymbolDecl* decl = graph.findSymbol(spec.symbol);
    if (!decl)
      continue;
    // Sizes 0 and 1: torch assumes them away, so a symbol's range starts
    // at 2 whatever was declared.
    int64_t lowest = decl->range.lo.value_or(INT64_MIN);
    for (int64_t size : {0, 1})
      if (spec.range.lo && *spec.range.lo <= size && size < lowest && lowest <= 2 &&
          spec.range.contains(size))
        add(spec, size,
            "torch specializes sizes 0 and 1, so the graph for " + spec.symbol + " serves " +
                spec.symbol + " >= " + std::to_string(lowest));
    // A range the program cut at a boundary (`batch < 16` at a batch of
    // 8): the graph serves one part, and a capture at the first size past
    // each cut serves the next.
    int64_t declaredLo = std::max<int64_t>(spec.range.lo.value_or(2), 2);
    std::string because = decl->origin.empty() ? "" : " (" + decl->origin + ")";
    std::string range;
    llvm::raw_string_ostream rangeText(range);
    decl->range.print(rangeText);
    if (decl->range.lo && *decl->range.lo > declaredLo && spec.range.contains(*decl->range.lo - 1))
      add(spec, *decl->range.lo - 1,
          "the program cuts the range at " + std::to_string(*decl->range.lo) +
              ", so the graph for " + spec.symbol + " serves " + spec.symbol + " in " + range +
              because);
    if (decl->range.hi && (!spec.range.hi || *decl->range.hi < *spec.range.hi) &&
        spec.range.contains(*decl->range.hi + 1))
      add(spec, *decl->range.hi + 1,
          "the program cuts the range at " + std::to_string(*decl->range.hi + 1) +
              ", so the graph for " + spec.symbol + " serves " + spec.symbol + " in " + range +
              because);
    // A relation that leaves out one size: `seq != 32`.
    for (const ir::Relation& relation : graph.relations()) {
      if (relation.kind != ir::RelationKind::Ne)
        continue;
      const ir::SymExpr* symbol = &relation.lhs;
      const ir::SymExpr* constant = &relation.rhs;
      if (!symbol->isSymbol())
        std::swap(symbol, constant);
      if (!symbol->isSymbol() || symbol->symbolName() != spec.symbol || !constant->isConstant())
        continue;
      int64_t size = constant->constantValue();
      if (spec.range.contains(size) && decl->range.contains(size))
        add(spec, size,
            "the graph assumes " + spec.symbol + " != " + std::to_string(size) + relation.origin);
    }
  }
  return uncovered;
}

bool servesPoint(const ir::Graph& graph, const SizePoint& capturedAt, const SizePoint& point) {
  for (const auto& [symbol, size] : point) {
    const ir::SymbolDecl* decl = graph.findSymbol(symbol);
    if (!decl) {
      // Pinned: by its size hint, or by torch at the size it was captured.
      auto at = capturedAt.find(symbol);
      if (at == capturedAt.end() || at->second != size)
        return false;
      continue;
    }
    if (!decl->range.contains(size))
      return false;
    for (const ir::Relation& relation : graph.relations()) {
      if (relation.kind != ir::RelationKind::Ne)
        continue;
      const ir::SymExpr* lhs = &relation.lhs;
      const ir::SymExpr* rhs = &relation.rhs;
      if (!lhs->isSymbol())
        std::swap(lhs, rhs);
      if (lhs->isSymbol() && lhs->symbolName() == symbol && rhs->isConstant() &&
          rhs->constantValue() == size)
        return false;
    }
  }
  return true;
}

std::string specializationSuffix(const SizePoint& point) {
  std::string suffix;
  for (const auto& [symbol, size] : point)
    suffix += "$" + symbol + "_" + std::to_string(size);
  return suffix;
}

std::string describePoint(const SizePoint& point) {
  std::string text;
  for (const auto& [symbol, size] : point)
    text += (text.empty() ? "" : ", ") + symbol + " = " + std::to_string(size);
  return text;
}

} // namespace dync::compiler
