//===- CommonSubexpressions.cpp - Merge calls that compute the same value -===//
//
// Two calls compute the same value when they apply the same overload to
// equal arguments with the same result type, the call is pure, and the
// storage the arguments read was not written in between. Merging also makes
// their results one tensor, so it is done only if nothing ever writes either
// result's storage, and never when both results (or views of them) are
// returned: the caller would get one tensor where eager gives two.
//
// The earlier call is the one kept, with its location: an error about the
// merged value names the first line that computed it.
//
//===----------------------------------------------------------------------===//
#include "passes/CallEffects.h"
#include "passes/Passes.h"
#include "passes/Uses.h"

#include "ir/Graph.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

namespace dync::transforms {

using namespace ir;

namespace {

/// A text that is equal for two calls exactly when they apply the same
/// overload to the same values and literals, with the same result type, and
/// every storage those values live in has been written the same number of
/// times before the call. Value names are unique in a graph, so printing
/// arguments identifies values.
std::string callKey(const Node& call, const AliasClasses& classes,
                    const llvm::DenseMap<unsigned, unsigned>& writes) {
  std::string key;
  llvm::raw_string_ostream os(key);
  os << call.op() << '(';
  for (const Argument& arg : call.args()) {
    arg.print(os);
    os << ", ";
  }
  for (const KeywordArgument& kwarg : call.kwargs()) {
    os << kwarg.name << '=';
    kwarg.value.print(os);
    os << ", ";
  }
  os << ") : " << call.type() << " after";
  call.forEachUse(
      [&](const ValueRef& use) { os << ' ' << writes.lookup(classes.classOf(use.node)); });
  return key;
}

} // namespace

llvm::Error runCommonSubexpressionElimination(Graph& graph) {
  AliasClasses classes(graph);
  // Per alias class, how many calls so far may have written it.
  llvm::DenseMap<unsigned, unsigned> writes;
  llvm::StringMap<Node*> available;

  for (auto it = graph.nodes().begin(); it != graph.nodes().end();) {
    Node& node = *it++;
    if (!node.isCall())
      continue;
    CallEffects effects = callEffects(node);
    if (effects.mayWrite) {
      node.forEachUse([&](const ValueRef& use) { ++writes[classes.classOf(use.node)]; });
      continue;
    }
    if (!effects.pure || classes.isWritten(&node))
      continue;
    auto [entry, inserted] = available.try_emplace(callKey(node, classes, writes), &node);
    if (inserted)
      continue;
    Node* earlier = entry->second;
    if (classes.isReturned(earlier) && classes.isReturned(&node))
      continue;
    replaceAllUses(graph, &node, earlier);
    classes.merge(&node, earlier);
    graph.erase(&node);
  }
  return llvm::Error::success();
}

} // namespace dync::transforms
