//===- RangeSpecializations.cpp - Sizes a graph leaves out of its ranges --===//
#include "compiler/RangeSpecializations.h"

#include "llvm/ADT/StringSet.h"

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
      if (spec.range.lo && *spec.range.lo <= size && size < lowest && spec.range.contains(size))
        add(spec, size,
            "torch specializes sizes 0 and 1, so the graph for " + spec.symbol + " serves " +
                spec.symbol + " >= " + std::to_string(lowest));
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
        add(spec, size, "the graph assumes " + spec.symbol + " != " + std::to_string(size));
    }
  }
  return uncovered;
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
