//===- RangeSpecializations.cpp - Sizes a graph leaves out of its ranges --===//
#include "compiler/RangeSpecializations.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace dync::compiler {

namespace {

/// Whether \p relation is a `!=` over \p symbol alone (`seq != 32`,
/// `8*n != 256`): it leaves single sizes of that symbol out.
bool isSingleSymbolNe(const ir::Relation& relation, llvm::StringRef symbol) {
  if (relation.kind != ir::RelationKind::Ne || !relation.isComparison())
    return false;
  bool only = true, any = false;
  auto check = [&](ir::SymExpr s) {
    any = true;
    only &= s.symbolName() == symbol;
  };
  relation.lhs.walkSymbols(check);
  relation.rhs.walkSymbols(check);
  return any && only;
}

/// Whether \p relation is a disjunction of comparisons over \p symbol alone
/// (`n == 6 or n mod 4 == 0`): it may leave many sizes of that symbol out.
bool isSingleSymbolDisjunction(const ir::Relation& relation, llvm::StringRef symbol) {
  if (relation.isComparison())
    return false;
  bool only = true, any = false;
  relation.walkSymbols([&](ir::SymExpr s) {
    any = true;
    only &= s.symbolName() == symbol;
  });
  return any && only;
}

/// Whether \p relation, whose symbols \p point all sets, fails there.
bool leavesOut(const ir::Relation& relation, const SizePoint& point) {
  ir::SymbolValues values;
  for (const auto& [symbol, size] : point)
    values[symbol] = size;
  llvm::Expected<bool> holds = relation.evaluate(values);
  if (!holds) {
    llvm::consumeError(holds.takeError());
    return false;
  }
  return !*holds;
}

/// Whether \p relation (see isSingleSymbolNe) leaves \p size of \p symbol
/// out: it does not hold there.
bool leavesOut(const ir::Relation& relation, llvm::StringRef symbol, int64_t size) {
  return leavesOut(relation, SizePoint{{symbol.str(), size}});
}

/// The sizes inside \p declared and \p served that \p relation leaves out:
/// `symbol != c` leaves c out; another expression is evaluated at each size
/// of a bounded range (up to 65536 of them).
std::vector<int64_t> sizesLeftOut(const ir::Relation& relation, llvm::StringRef symbol,
                                  const ir::SymbolRange& declared, const ir::SymbolRange& served) {
  std::vector<int64_t> sizes;
  const ir::SymExpr* bare = &relation.lhs;
  const ir::SymExpr* constant = &relation.rhs;
  if (!bare->isSymbol())
    std::swap(bare, constant);
  if (relation.isComparison() && bare->isSymbol() && constant->isConstant()) {
    int64_t size = constant->constantValue();
    if (declared.contains(size) && served.contains(size))
      sizes.push_back(size);
    return sizes;
  }
  std::optional<int64_t> lo = declared.lo, hi = declared.hi;
  if (served.lo && (!lo || *served.lo > *lo))
    lo = served.lo;
  if (served.hi && (!hi || *served.hi < *hi))
    hi = served.hi;
  if (!lo || !hi || *hi - *lo > 65535)
    return sizes;
  for (int64_t size = *lo; size <= *hi; ++size)
    if (leavesOut(relation, symbol, size))
      sizes.push_back(size);
  return sizes;
}

} // namespace

std::vector<UncoveredSize> uncoveredSizes(const ir::Graph& graph,
                                          const std::vector<capture::DynamicSpec>& specs,
                                          const SizePoint& at) {
  std::vector<UncoveredSize> uncovered;
  llvm::StringSet<> seen;
  auto add = [&](const capture::DynamicSpec& spec, int64_t size, std::string why,
                 bool torchSpecializes = false, bool oneOfMany = false) {
    SizePoint point = at;
    point[spec.symbol] = size;
    for (const UncoveredSize& known : uncovered)
      if (known.point == point)
        return;
    uncovered.push_back({std::move(point), spec.text, spec.symbol, size, std::move(why),
                         torchSpecializes, oneOfMany});
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
                spec.symbol + " >= " + std::to_string(lowest),
            /*torchSpecializes=*/true);
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
    // A relation over this symbol alone that leaves sizes out: `seq !=
    // 32`, `8*n != 256`, `n mod 4 != 0`, `n == 6 or n mod 4 == 0`.
    for (const ir::Relation& relation : graph.relations()) {
      if (!isSingleSymbolNe(relation, spec.symbol) &&
          !isSingleSymbolDisjunction(relation, spec.symbol))
        continue;
      std::string text;
      llvm::raw_string_ostream os(text);
      relation.print(os);
      std::vector<int64_t> sizes = sizesLeftOut(relation, spec.symbol, spec.range, decl->range);
      for (int64_t size : sizes)
        add(spec, size, "the graph assumes " + text + relation.origin, false,
            /*oneOfMany=*/sizes.size() > 1);
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
    // The relations over the point's symbols alone, evaluated there.
    for (const ir::Relation& relation : graph.relations()) {
      bool within = true;
      relation.walkSymbols([&](ir::SymExpr s) { within &= point.count(s.symbolName().str()) > 0; });
      if (within && leavesOut(relation, point))
        return false;
    }
  }
  return true;
}

std::optional<std::vector<SizePoint>>
unservedPoints(const std::vector<GraphAt>& graphs, const std::vector<capture::DynamicSpec>& specs) {
  constexpr uint64_t MaxPoints = 1 << 16;
  // Each symbol once, with its declared range.
  std::vector<std::pair<std::string, ir::SymbolRange>> symbols;
  uint64_t count = 1;
  for (const capture::DynamicSpec& spec : specs) {
    if (llvm::any_of(symbols, [&](const auto& s) { return s.first == spec.symbol; }))
      continue;
    if (!spec.range.lo || !spec.range.hi || *spec.range.hi < *spec.range.lo)
      return std::nullopt;
    count *= uint64_t(*spec.range.hi - *spec.range.lo + 1);
    if (count > MaxPoints)
      return std::nullopt;
    symbols.emplace_back(spec.symbol, spec.range);
  }
  std::vector<SizePoint> unserved;
  if (symbols.empty())
    return unserved;
  SizePoint point;
  for (const auto& [symbol, range] : symbols)
    point[symbol] = *range.lo;
  // A symbol a graph neither declares nor was captured at a size of (torch
  // replaced it by an expression of another) is not checked against it.
  auto serves = [&](const GraphAt& made) {
    SizePoint known;
    for (const auto& [symbol, size] : point)
      if (made.first->findSymbol(symbol) || made.second.count(symbol))
        known[symbol] = size;
    return servesPoint(*made.first, made.second, known);
  };
  // Odometer over the box, the last symbol fastest.
  for (;;) {
    if (llvm::none_of(graphs, serves))
      unserved.push_back(point);
    size_t d = symbols.size();
    while (d > 0 && point[symbols[d - 1].first] == *symbols[d - 1].second.hi) {
      point[symbols[d - 1].first] = *symbols[d - 1].second.lo;
      --d;
    }
    if (d == 0)
      return unserved;
    ++point[symbols[d - 1].first];
  }
}

std::string describePoints(const std::vector<SizePoint>& points, size_t maxGroups) {
  // Groups by every size but the last symbol's, in order of first point.
  struct Group {
    SizePoint rest;
    std::string last;
    std::vector<int64_t> sizes;
  };
  std::vector<Group> groups;
  for (const SizePoint& point : points) {
    if (point.empty())
      continue;
    SizePoint rest = point;
    std::string last = std::prev(rest.end())->first;
    int64_t size = std::prev(rest.end())->second;
    rest.erase(std::prev(rest.end()));
    auto group =
        llvm::find_if(groups, [&](const Group& g) { return g.rest == rest && g.last == last; });
    if (group == groups.end()) {
      groups.push_back({rest, last, {}});
      group = std::prev(groups.end());
    }
    group->sizes.push_back(size);
  }
  std::string text;
  size_t shown = 0, left = 0;
  for (auto& [rest, last, sizes] : groups) {
    if (shown == maxGroups) {
      left += sizes.size();
      continue;
    }
    ++shown;
    llvm::sort(sizes);
    std::string list;
    for (size_t i = 0; i < sizes.size();) {
      size_t j = i;
      while (j + 1 < sizes.size() && sizes[j + 1] == sizes[j] + 1)
        ++j;
      list += (list.empty() ? "" : ", ") + std::to_string(sizes[i]);
      if (j > i)
        list += (j == i + 1 ? ", " : "..") + std::to_string(sizes[j]);
      i = j + 1;
    }
    std::string prefix = describePoint(rest);
    text += (text.empty() ? "" : "; ") + prefix + (prefix.empty() ? "" : ", ") + last +
            (sizes.size() == 1 ? " = " + list : " in {" + list + "}");
  }
  if (left)
    text += "; and " + std::to_string(left) + " more";
  return text;
}

std::string rangeFreeText(const ir::Graph& graph) {
  std::string text;
  llvm::raw_string_ostream os(text);
  graph.print(os);
  for (const ir::Guard& guard : graph.guards().guards()) {
    guard.print(os);
    os << '\n';
  }
  // The header starts with the name (and its indentation follows the
  // name's length); the symbols' block holds only names and ranges, and the
  // names stay.
  std::string normal;
  for (char c : llvm::StringRef(text).drop_until([](char c) { return c == '('; }))
    if (c != ' ' || normal.empty() || normal.back() != ' ')
      normal.push_back(c);
  llvm::StringRef body = normal;
  std::string result;
  size_t symbols = body.find("symbols {");
  if (symbols == llvm::StringRef::npos)
    return body.str();
  size_t close = body.find('}', symbols);
  result = body.take_front(symbols).str();
  for (const ir::SymbolDecl& decl : graph.symbols())
    result += decl.name + " ";
  result += body.drop_front(close == llvm::StringRef::npos ? body.size() : close + 1).str();
  return result;
}

std::optional<MergedRange> mergedRange(const ir::Graph& earlier, const ir::Graph& later) {
  if (earlier.symbols().size() != later.symbols().size())
    return std::nullopt;
  std::optional<MergedRange> merged;
  for (const ir::SymbolDecl& mine : later.symbols()) {
    const ir::SymbolDecl* theirs = earlier.findSymbol(mine.name);
    if (!theirs)
      return std::nullopt;
    const ir::SymbolRange &a = theirs->range, &b = mine.range;
    if (a.lo == b.lo && a.hi == b.hi)
      continue;
    // A data-dependent value's range is what its graph checks when it runs,
    // not a range of inputs to join.
    if (mine.unbacked || theirs->unbacked)
      return std::nullopt;
    if (merged)
      return std::nullopt; // two symbols differ: the union is no box
    // Both ranges are one interval when each starts at most one past the
    // other's end.
    auto startsBy = [](const ir::SymbolRange& x, const ir::SymbolRange& y) {
      return !x.lo || !y.hi || *x.lo <= *y.hi + 1;
    };
    if (!startsBy(a, b) || !startsBy(b, a))
      return std::nullopt;
    ir::SymbolRange range;
    if (a.lo && b.lo)
      range.lo = std::min(*a.lo, *b.lo);
    if (a.hi && b.hi)
      range.hi = std::max(*a.hi, *b.hi);
    std::string what;
    llvm::raw_string_ostream os(what);
    os << mine.name << " in ";
    a.print(os);
    os << " and ";
    b.print(os);
    merged = MergedRange{mine.name, range, std::move(what)};
  }
  return merged;
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
