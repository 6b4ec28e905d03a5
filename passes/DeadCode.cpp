//===- DeadCode.cpp - Remove calls nothing needs --------------------------===//
//
// A call may go when nothing uses its result and it has no effect of its
// own: it writes no argument, draws nothing from the random generator (a
// dead dropout still advances it) and is no check torch.fx keeps. Inputs
// stay (they are the graph's signature), and so does the output.
//
//===----------------------------------------------------------------------===//
#include "passes/CallEffects.h"
#include "passes/Passes.h"

#include "ir/Graph.h"

namespace dync::transforms {

using namespace ir;

void eraseUnusedCalls(Graph& graph, llvm::function_ref<bool(const Node&)> mayErase) {
  llvm::DenseMap<const Node*, unsigned> useCount;
  for (const Node& node : graph.nodes())
    node.forEachUse([&](const ValueRef& use) { ++useCount[use.node]; });

  // Users come after what they use, so one walk from the end frees whole
  // dead chains: erasing a call releases its arguments before they are seen.
  for (auto it = graph.nodes().rbegin(); it != graph.nodes().rend();) {
    Node& node = *it++;
    if (!node.isCall() || useCount.lookup(&node) != 0 || !mayErase(node))
      continue;
    node.forEachUse([&](const ValueRef& use) { --useCount[use.node]; });
    graph.erase(&node);
  }
}

llvm::Error runDeadCodeElimination(Graph& graph) {
  eraseUnusedCalls(graph, [](const Node& node) { return callEffects(node).pure; });
  return llvm::Error::success();
}

} // namespace dync::transforms
