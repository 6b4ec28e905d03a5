//===- FallBackChecks.cpp - Fall-back checks before random draws ----------===//
//
// A decision on tensor data specialized to the example's side is checked
// where the program decided (DataBranches.cpp); a call taking the other
// side then runs the program's original code. Random operators' calls
// before the check that draw (by their arguments, ir/RandomDraws.h:
// attention at dropout_p 0 draws nothing) have advanced the generator by
// then; the graph puts its state back before falling back
// (codegen/FallBackGenerator.cpp), which costs saving it first. So each
// fall-back check whose condition is computed without random numbers is
// moved, with the calls computing it, to before the first random operator
// where that is free: nothing between them may write what the condition
// reads (an input, or a value it is computed from) and none of those calls
// uses a size read from data. A call taking the other side then falls back
// before drawing, and a graph whose checks all move saves nothing. A check
// that cannot move stays where the program decided.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/DataBranches.h"

#include "ir/Graph.h"
#include "ir/OpTraits.h"
#include "ir/RandomDraws.h"
#include "ir/RunTimeCheck.h"
#include "ir/ScalarOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"

#include <functional>
#include <optional>
#include <string>

namespace dync::capture {

namespace {

bool isFallBackCheck(const ir::Node& node) {
  return node.isCall() && node.op() == "aten::_assert_async.msg" && node.args().size() == 2 &&
         node.args()[1].kind() == ir::Argument::Kind::String &&
         ir::fallBackCheckWhat(node.args()[1].stringValue()).has_value();
}

/// Whether \p node mentions a symbol some node's result computes (the
/// verifier wants it after that node, which a move could pass).
bool mentionsUnbacked(const ir::Node& node, const llvm::StringSet<>& unbacked) {
  if (unbacked.empty())
    return false;
  bool found = false;
  auto visit = [&](ir::SymExpr e) {
    if (e)
      e.walkSymbols(
          [&](ir::SymExpr symbol) { found = found || unbacked.contains(symbol.symbolName()); });
  };
  for (const ir::Argument& arg : node.args())
    arg.forEachSym(visit);
  for (const ir::KeywordArgument& kwarg : node.kwargs())
    kwarg.value.forEachSym(visit);
  node.type().walkSymExprs(visit);
  return found;
}

/// Whether \p node may be moved before a random operator: a call that
/// neither draws nor writes. Python's arithmetic on numbers changes
/// nothing.
bool movable(const ir::Node& node, const llvm::StringSet<>& unbacked) {
  if (!node.isCall() || mentionsUnbacked(node, unbacked))
    return false;
  if (ir::scalarOpOf(node))
    return true;
  const ir::OpTraits* traits = ir::findOpTraits(node.op());
  return traits && !ir::mayDraw(node) && !traits->mutatesArgument;
}

/// Whether a call \p writer may write what a node of \p reads (or an input)
/// holds: one of its tensor arguments is such a node, or a view of one
/// (any call whose result may alias an argument, followed back).
bool mayWrite(const ir::Node& writer, const llvm::SmallPtrSetImpl<const ir::Node*>& reads) {
  llvm::SmallPtrSet<const ir::Node*, 16> seen;
  std::function<bool(const ir::Node*)> reaches = [&](const ir::Node* node) {
    if (!node || !seen.insert(node).second)
      return false;
    if (node->isInput() || reads.contains(node))
      return true;
    const ir::OpTraits* traits = node->isCall() ? ir::findOpTraits(node->op()) : nullptr;
    if (!traits || !traits->returnsAlias)
      return false;
    bool found = false;
    node->forEachUse([&](const ir::ValueRef& used) { found = found || reaches(used.node); });
    return found;
  };
  bool found = false;
  writer.forEachUse([&](const ir::ValueRef& used) { found = found || reaches(used.node); });
  return found;
}

/// Whether \p node may write a tensor: an in-place or out= call, or one
/// dync has no traits for.
bool writes(const ir::Node& node) {
  if (!node.isCall() || ir::scalarOpOf(node))
    return false;
  const ir::OpTraits* traits = ir::findOpTraits(node.op());
  return !traits || traits->mutatesArgument;
}

/// The unbacked symbols \p graph declares.
llvm::StringSet<> unbackedSymbols(const ir::Graph& graph) {
  llvm::StringSet<> unbacked;
  for (const ir::SymbolDecl& decl : graph.symbols())
    if (decl.unbacked)
      unbacked.insert(decl.name);
  return unbacked;
}

/// The graph's first random operator, or null.
const ir::Node* firstRandomOperator(const ir::Graph& graph) {
  for (const ir::Node& node : graph.nodes()) {
    if (!node.isCall() || ir::scalarOpOf(node))
      continue;
    if (ir::mayDraw(node))
      return &node;
  }
  return nullptr;
}

/// The calls computing \p check's condition after \p firstRandom, in graph
/// order, when all of them and \p check can run before it: none draws,
/// writes or uses a size read from data, and nothing between \p firstRandom
/// and \p check may write what they read. Nullopt otherwise.
std::optional<llvm::SmallVector<const ir::Node*, 8>> coneBefore(const ir::Graph& graph,
                                                                const ir::Node& firstRandom,
                                                                const ir::Node& check,
                                                                const llvm::StringSet<>& unbacked) {
  llvm::DenseMap<const ir::Node*, unsigned> position;
  unsigned index = 0;
  for (const ir::Node& each : graph.nodes())
    position[&each] = index++;
  unsigned from = position[&firstRandom];
  llvm::SmallVector<const ir::Node*, 8> cone;
  llvm::SmallPtrSet<const ir::Node*, 16> reads;
  llvm::SmallVector<const ir::Node*, 8> work{&check};
  bool ok = true;
  while (!work.empty() && ok) {
    const ir::Node* current = work.pop_back_val();
    current->forEachUse([&](const ir::ValueRef& used) {
      const ir::Node* def = used.node;
      if (!def || def->isInput() || position[def] < from || !reads.insert(def).second)
        return;
      if (!movable(*def, unbacked)) {
        ok = false;
        return;
      }
      cone.push_back(def);
      work.push_back(def);
    });
  }
  for (auto between = firstRandom.getIterator(); ok && &*between != &check; ++between)
    if (writes(*between) && mayWrite(*between, reads))
      ok = false;
  if (!ok)
    return std::nullopt;
  llvm::sort(cone, [&](const ir::Node* a, const ir::Node* b) { return position[a] < position[b]; });
  return cone;
}

} // namespace

llvm::Error runFallBackChecksFirst(ir::Graph& graph) {
  auto* firstRandom = const_cast<ir::Node*>(firstRandomOperator(graph));
  if (!firstRandom)
    return llvm::Error::success();
  llvm::StringSet<> unbacked = unbackedSymbols(graph);
  ir::Graph::NodeList& nodes = graph.nodes();
  for (auto it = std::next(firstRandom->getIterator()); it != nodes.end();) {
    ir::Node& node = *it++;
    if (!isFallBackCheck(node))
      continue;
    std::optional<llvm::SmallVector<const ir::Node*, 8>> cone =
        coneBefore(graph, *firstRandom, node, unbacked);
    if (!cone)
      continue;
    cone->push_back(&node);
    for (const ir::Node* moved : *cone)
      nodes.splice(firstRandom->getIterator(), nodes, const_cast<ir::Node*>(moved)->getIterator());
  }
  return llvm::Error::success();
}

} // namespace dync::capture
