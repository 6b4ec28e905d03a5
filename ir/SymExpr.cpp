//===- SymExpr.cpp - Symbolic integers: storage, order, printing ----------===//
//
// The canonicalizing arithmetic is in SymSimplify.cpp; this file holds what
// does not build expressions: uniquing, the structural order, the text form
// and evaluation.
//
//===----------------------------------------------------------------------===//
#include "ir/SymExpr.h"

#include "ir/PythonInt.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <limits>

namespace dync::ir {

//===----------------------------------------------------------------------===//
// Storage and uniquing
//===----------------------------------------------------------------------===//

static void profile(llvm::FoldingSetNodeID& id, SymKind kind, int64_t value, llvm::StringRef name,
                    llvm::ArrayRef<SymExpr> operands) {
  id.AddInteger(static_cast<unsigned>(kind));
  id.AddInteger(value);
  id.AddString(name);
  for (SymExpr operand : operands)
    id.AddPointer(operand.storage());
}

void SymExprStorage::Profile(llvm::FoldingSetNodeID& id) const {
  profile(id, kind, value, name, llvm::ArrayRef(operandArray, numOperands));
}

SymExpr Context::intern(const llvm::FoldingSetNodeID& id, void* insertPos,
                        SymExprStorage prototype) {
  auto* storage = new (allocator_.Allocate<SymExprStorage>()) SymExprStorage(prototype);
  exprs_.InsertNode(storage, insertPos);
  return SymExpr(storage);
}

SymExpr Context::constant(int64_t value) {
  llvm::FoldingSetNodeID id;
  profile(id, SymKind::Const, value, "", {});
  void* insertPos = nullptr;
  if (SymExprStorage* existing = exprs_.FindNodeOrInsertPos(id, insertPos))
    return SymExpr(existing);
  return intern(id, insertPos, {{}, this, SymKind::Const, value, "", nullptr, 0, 1});
}

SymExpr Context::symbol(llvm::StringRef name) {
  llvm::FoldingSetNodeID id;
  profile(id, SymKind::Symbol, 0, name, {});
  void* insertPos = nullptr;
  if (SymExprStorage* existing = exprs_.FindNodeOrInsertPos(id, insertPos))
    return SymExpr(existing);
  return intern(id, insertPos, {{}, this, SymKind::Symbol, 0, strings_.save(name), nullptr, 0, 1});
}

SymExpr Context::node(SymKind kind, llvm::ArrayRef<SymExpr> operands) {
  llvm::FoldingSetNodeID id;
  profile(id, kind, 0, "", operands);
  void* insertPos = nullptr;
  if (SymExprStorage* existing = exprs_.FindNodeOrInsertPos(id, insertPos))
    return SymExpr(existing);
  SymExpr* copy = allocator_.Allocate<SymExpr>(operands.size());
  std::uninitialized_copy(operands.begin(), operands.end(), copy);
  uint32_t depth = 0;
  for (SymExpr operand : operands)
    depth = std::max(depth, operand.storage()->depth);
  return intern(id, insertPos,
                {{}, this, kind, 0, "", copy, static_cast<uint32_t>(operands.size()), depth + 1});
}

SymKind SymExpr::kind() const { return storage_->kind; }
Context& SymExpr::context() const { return *storage_->context; }

int64_t SymExpr::constantValue() const {
  assert(isConstant() && "not a constant");
  return storage_->value;
}

llvm::StringRef SymExpr::symbolName() const {
  assert(isSymbol() && "not a symbol");
  return storage_->name;
}

llvm::ArrayRef<SymExpr> SymExpr::operands() const {
  return llvm::ArrayRef(storage_->operandArray, storage_->numOperands);
}

unsigned SymExpr::depth() const { return storage_->depth; }

std::string SymExpr::str() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  print(os);
  return text;
}

//===----------------------------------------------------------------------===//
// Structural order
//===----------------------------------------------------------------------===//

/// Orders names as a reader expects: digit runs compare as numbers, so `s2`
/// comes before `s10`. Distinct names never compare equal.
static int compareNames(llvm::StringRef a, llvm::StringRef b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (llvm::isDigit(a[i]) && llvm::isDigit(b[j])) {
      size_t iEnd = i, jEnd = j;
      while (iEnd < a.size() && llvm::isDigit(a[iEnd]))
        ++iEnd;
      while (jEnd < b.size() && llvm::isDigit(b[jEnd]))
        ++jEnd;
      llvm::StringRef x = a.slice(i, iEnd).ltrim('0'), y = b.slice(j, jEnd).ltrim('0');
      if (x.size() != y.size())
        return x.size() < y.size() ? -1 : 1;
      if (int c = x.compare(y))
        return c;
      i = iEnd;
      j = jEnd;
      continue;
    }
    if (a[i] != b[j])
      return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]) ? -1 : 1;
    ++i;
    ++j;
  }
  if (i < a.size() || j < b.size())
    return i < a.size() ? 1 : -1;
  return a.compare(b); // same up to leading zeros
}

int SymExpr::compare(SymExpr a, SymExpr b) {
  if (a == b)
    return 0;
  if (a.kind() != b.kind())
    return a.kind() < b.kind() ? -1 : 1;
  switch (a.kind()) {
  case SymKind::Const:
    return a.constantValue() < b.constantValue() ? -1 : 1;
  case SymKind::Symbol:
    return compareNames(a.symbolName(), b.symbolName());
  default:
    break;
  }
  llvm::ArrayRef<SymExpr> x = a.operands(), y = b.operands();
  for (size_t i = 0, e = std::min(x.size(), y.size()); i < e; ++i)
    if (int c = compare(x[i], y[i]))
      return c;
  return x.size() < y.size() ? -1 : 1;
}

//===----------------------------------------------------------------------===//
// Evaluation
//===----------------------------------------------------------------------===//

static llvm::Error overflowError(const SymExpr& e) {
  return llvm::createStringError("integer overflow evaluating '%s'", e.str().c_str());
}

llvm::Expected<int64_t> SymExpr::evaluate(const SymbolValues& values) const {
  switch (kind()) {
  case SymKind::Const:
    return constantValue();
  case SymKind::Symbol: {
    auto it = values.find(symbolName());
    if (it == values.end())
      return llvm::createStringError("no value for symbol '%s'", symbolName().str().c_str());
    return it->second;
  }
  default:
    break;
  }
  llvm::Expected<int64_t> first = operands().front().evaluate(values);
  if (!first)
    return first.takeError();
  int64_t result = *first;
  for (SymExpr operand : operands().drop_front()) {
    llvm::Expected<int64_t> value = operand.evaluate(values);
    if (!value)
      return value.takeError();
    int64_t arg = *value;
    std::optional<int64_t> next;
    switch (kind()) {
    case SymKind::Add:
      next = llvm::checkedAdd(result, arg);
      break;
    case SymKind::Mul:
      next = llvm::checkedMul(result, arg);
      break;
    case SymKind::FloorDiv:
    case SymKind::Mod:
      if (arg == 0)
        return llvm::createStringError("division by zero evaluating '%s'", str().c_str());
      next = kind() == SymKind::FloorDiv ? pythonFloorDiv(result, arg) : pythonMod(result, arg);
      break;
    case SymKind::Min:
      next = std::min(result, arg);
      break;
    case SymKind::Max:
      next = std::max(result, arg);
      break;
    default:
      llvm_unreachable("leaf kinds handled above");
    }
    if (!next)
      return overflowError(*this);
    result = *next;
  }
  return result;
}

void SymExpr::walkSymbols(llvm::function_ref<void(SymExpr symbol)> fn) const {
  if (isSymbol())
    fn(*this);
  for (SymExpr operand : operands())
    operand.walkSymbols(fn);
}

//===----------------------------------------------------------------------===//
// Text form
//===----------------------------------------------------------------------===//
//
// Binding strength, loosest first. Unary minus binds tighter than `*`, as in
// Python: `-a floordiv b` is `(-a) floordiv b`.

namespace {
enum Precedence { SumLevel = 1, ProductLevel, UnaryLevel, AtomLevel };

class SymPrinter {
public:
  explicit SymPrinter(llvm::raw_ostream& os) : os_(os) {}

  void print(SymExpr e, Precedence required) {
    bool parens = precedence(e) < required;
    if (parens)
      os_ << '(';
    printBare(e);
    if (parens)
      os_ << ')';
  }

private:
  static Precedence precedence(SymExpr e) {
    switch (e.kind()) {
    case SymKind::Const:
      return e.constantValue() < 0 ? UnaryLevel : AtomLevel;
    case SymKind::Symbol:
    case SymKind::Min:
    case SymKind::Max:
      return AtomLevel;
    case SymKind::Add:
      return SumLevel;
    case SymKind::Mul:
    case SymKind::FloorDiv:
    case SymKind::Mod:
      return ProductLevel;
    }
    llvm_unreachable("unknown kind");
  }

  /// Coefficient of a term in a sum, and its factors.
  static std::pair<int64_t, llvm::ArrayRef<SymExpr>> splitTerm(const SymExpr& term) {
    if (term.kind() != SymKind::Mul)
      return {1, llvm::ArrayRef(term)};
    if (term.operands().front().isConstant())
      return {term.operands().front().constantValue(), term.operands().drop_front()};
    return {1, term.operands()};
  }

  void printProduct(int64_t coefficient, llvm::ArrayRef<SymExpr> factors) {
    if (coefficient == 1 && factors.size() == 1)
      return print(factors.front(), ProductLevel);
    if (coefficient == -1)
      os_ << '-';
    else if (coefficient != 1)
      os_ << coefficient << '*';
    llvm::interleave(factors, os_, [&](SymExpr factor) { print(factor, AtomLevel); }, "*");
  }

  void printSum(llvm::ArrayRef<SymExpr> terms) {
    print(terms.front(), ProductLevel);
    for (SymExpr term : terms.drop_front()) {
      if (term.isConstant() && term.constantValue() < 0 &&
          term.constantValue() != std::numeric_limits<int64_t>::min()) {
        os_ << " - " << -term.constantValue();
        continue;
      }
      auto [coefficient, factors] = splitTerm(term);
      if (coefficient < 0 && coefficient != std::numeric_limits<int64_t>::min()) {
        os_ << " - ";
        printProduct(-coefficient, factors);
        continue;
      }
      os_ << " + ";
      print(term, ProductLevel);
    }
  }

  void printBare(SymExpr e) {
    switch (e.kind()) {
    case SymKind::Const:
      os_ << e.constantValue();
      return;
    case SymKind::Symbol:
      os_ << e.symbolName();
      return;
    case SymKind::Mul: {
      auto [coefficient, factors] = splitTerm(e);
      return printProduct(coefficient, factors);
    }
    case SymKind::Add:
      return printSum(e.operands());
    case SymKind::FloorDiv:
    case SymKind::Mod:
      print(e.operands()[0], ProductLevel);
      os_ << (e.kind() == SymKind::FloorDiv ? " floordiv " : " mod ");
      print(e.operands()[1], UnaryLevel);
      return;
    case SymKind::Min:
    case SymKind::Max:
      os_ << (e.kind() == SymKind::Min ? "min(" : "max(");
      llvm::interleaveComma(e.operands(), os_, [&](SymExpr op) { print(op, SumLevel); });
      os_ << ')';
      return;
    }
  }

  llvm::raw_ostream& os_;
};
} // namespace

void SymExpr::print(llvm::raw_ostream& os) const {
  if (!storage_) {
    os << "<<null>>";
    return;
  }
  SymPrinter(os).print(*this, SumLevel);
}

} // namespace dync::ir
