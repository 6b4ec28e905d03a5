//===- Uses.cpp - Finding and rewriting the uses of values ----------------===//
#include "passes/Uses.h"

#include "ir/Graph.h"

namespace dync::transforms {

using namespace ir;

namespace {

/// Calls \p fn on \p arg and, for lists and tuples, on every element inside.
void walkArgument(Argument& arg, llvm::function_ref<void(Argument&)> fn) {
  fn(arg);
  if (arg.isContainer())
    for (Argument& element : arg.elements())
      walkArgument(element, fn);
}

/// Calls \p fn on every argument of every node, keyword arguments and the
/// returned value included.
void walkArguments(Graph& graph, llvm::function_ref<void(Argument&)> fn) {
  for (Node& node : graph.nodes()) {
    for (Argument& arg : node.args())
      walkArgument(arg, fn);
    for (KeywordArgument& kwarg : node.kwargs())
      walkArgument(kwarg.value, fn);
  }
}

} // namespace

UserMap collectUsers(const Graph& graph) {
  UserMap users;
  for (const Node& node : graph.nodes())
    node.forEachUse([&](const ValueRef& use) {
      if (use.node)
        users[use.node].push_back(const_cast<Node*>(&node));
    });
  return users;
}

void replaceAllUses(Graph& graph, const Node* from, Node* to) {
  walkArguments(graph, [&](Argument& arg) {
    if (arg.isValue() && arg.valueRef().node == from)
      arg.valueRef().node = to;
  });
}

void replaceUses(Graph& graph, const ValueRef& use, const Argument& replacement) {
  walkArguments(graph, [&](Argument& arg) {
    if (arg.isValue() && arg.valueRef() == use)
      arg = replacement;
  });
}

} // namespace dync::transforms
