//===- Assumptions.cpp - Symbol ranges and relations ----------------------===//
#include "ir/Assumptions.h"

#include "llvm/ADT/STLExtras.h"

namespace dync::ir {

void SymbolRange::print(llvm::raw_ostream& os) const {
  os << '[';
  if (lo)
    os << *lo;
  else
    os << "-inf";
  os << ", ";
  if (hi)
    os << *hi;
  else
    os << "inf";
  os << ']';
}

llvm::StringRef spelling(RelationKind kind) {
  switch (kind) {
  case RelationKind::Eq:
    return "==";
  case RelationKind::Ne:
    return "!=";
  case RelationKind::Lt:
    return "<";
  case RelationKind::Le:
    return "<=";
  case RelationKind::Gt:
    return ">";
  case RelationKind::Ge:
    return ">=";
  }
  llvm_unreachable("unknown relation");
}

llvm::Expected<bool> Comparison::evaluate(const SymbolValues& values) const {
  llvm::Expected<int64_t> a = lhs.evaluate(values);
  if (!a)
    return a.takeError();
  llvm::Expected<int64_t> b = rhs.evaluate(values);
  if (!b)
    return b.takeError();
  switch (kind) {
  case RelationKind::Eq:
    return *a == *b;
  case RelationKind::Ne:
    return *a != *b;
  case RelationKind::Lt:
    return *a < *b;
  case RelationKind::Le:
    return *a <= *b;
  case RelationKind::Gt:
    return *a > *b;
  case RelationKind::Ge:
    return *a >= *b;
  }
  llvm_unreachable("unknown relation");
}

void Comparison::print(llvm::raw_ostream& os) const {
  os << lhs << ' ' << spelling(kind) << ' ' << rhs;
}

std::vector<Comparison> Relation::comparisons() const {
  std::vector<Comparison> all{{lhs, kind, rhs}};
  all.insert(all.end(), alternatives.begin(), alternatives.end());
  return all;
}

void Relation::walkSymbols(llvm::function_ref<void(SymExpr)> fn) const {
  for (const Comparison& comparison : comparisons()) {
    comparison.lhs.walkSymbols(fn);
    comparison.rhs.walkSymbols(fn);
  }
}

bool Relation::isConstant() const {
  return llvm::all_of(comparisons(),
                      [](const Comparison& c) { return c.lhs.isConstant() && c.rhs.isConstant(); });
}

llvm::Expected<bool> Relation::evaluate(const SymbolValues& values) const {
  // A disjunction holds when one comparison does, even if another cannot
  // be evaluated there (a division by zero in a branch not taken).
  std::optional<llvm::Error> failure;
  for (const Comparison& comparison : comparisons()) {
    llvm::Expected<bool> holds = comparison.evaluate(values);
    if (!holds) {
      if (failure)
        llvm::consumeError(holds.takeError());
      else
        failure = holds.takeError();
      continue;
    }
    if (*holds) {
      if (failure)
        llvm::consumeError(std::move(*failure));
      return true;
    }
  }
  if (failure)
    return std::move(*failure);
  return false;
}

void Relation::print(llvm::raw_ostream& os) const {
  bool first = true;
  for (const Comparison& comparison : comparisons()) {
    if (!first)
      os << " or ";
    first = false;
    comparison.print(os);
  }
}

} // namespace dync::ir

namespace dync::ir {

bool mentionsUnbacked(SymExpr expr, llvm::ArrayRef<SymbolDecl> symbols) {
  bool found = false;
  expr.walkSymbols([&](SymExpr symbol) {
    for (const SymbolDecl& decl : symbols)
      if (decl.unbacked && decl.name == symbol.symbolName())
        found = true;
  });
  return found;
}

bool mentionsUnbacked(const Relation& relation, llvm::ArrayRef<SymbolDecl> symbols) {
  return llvm::any_of(relation.comparisons(), [&](const Comparison& c) {
    return mentionsUnbacked(c.lhs, symbols) || mentionsUnbacked(c.rhs, symbols);
  });
}

} // namespace dync::ir
