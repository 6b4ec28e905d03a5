//===- Assumptions.cpp - Symbol ranges and relations ----------------------===//
#include "ir/Assumptions.h"

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

llvm::Expected<bool> Relation::evaluate(const SymbolValues& values) const {
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

void Relation::print(llvm::raw_ostream& os) const {
  os << lhs << ' ' << spelling(kind) << ' ' << rhs;
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
  return mentionsUnbacked(relation.lhs, symbols) || mentionsUnbacked(relation.rhs, symbols);
}

} // namespace dync::ir
