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

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

namespace dync::transforms {

using namespace ir;

void eraseUnusedCalls(Graph& graph, llvm::function_ref<bool(const Node&)> mayErase) {
  llvm::DenseMap<const Node*, unsigned> useCount;
  for (const Node& node : graph.nodes())
    node.forEachUse([&](const ValueRef& use) { ++useCount[use.node]; });

  // A call that first computes an unbacked symbol (`nonzero`, `item`) is
  // where the graph reads that size from, even when nothing uses its value;
  // the first giving a returned one as an int is what the graph returns
  // (outputLeaves).
  llvm::DenseSet<const Node*> computesSymbol;
  {
    llvm::StringSet<> computed, returnedInts;
    auto isUnbacked = [&](SymExpr e) {
      return e && e.isSymbol() && mentionsUnbacked(e, graph.symbols());
    };
    if (const Node* output = graph.output())
      for (const Argument& arg : output->args())
        arg.forEachSym([&](SymExpr expr) {
          expr.walkSymbols([&](SymExpr symbol) {
            if (isUnbacked(symbol))
              returnedInts.insert(symbol.symbolName());
          });
        });
    for (const Node& node : graph.nodes()) {
      if (!node.isCall())
        continue;
      auto note = [&](SymExpr e) {
        if (isUnbacked(e) && computed.insert(e.symbolName()).second)
          computesSymbol.insert(&node);
      };
      const Type& type = node.type();
      llvm::SmallVector<const Type*, 4> types;
      if (type.isSequence())
        for (const Type& element : type.elements())
          types.push_back(&element);
      else
        types.push_back(&type);
      for (const Type* element : types) {
        if (element->isTensor())
          for (SymExpr size : element->sizes())
            note(size);
        else if (element->kind() == Type::Kind::Int) {
          note(element->intValue());
          SymExpr e = element->intValue();
          if (isUnbacked(e) && returnedInts.erase(e.symbolName()))
            computesSymbol.insert(&node);
        }
      }
    }
  }

  // Users come after what they use, so one walk from the end frees whole
  // dead chains: erasing a call releases its arguments before they are seen.
  for (auto it = graph.nodes().rbegin(); it != graph.nodes().rend();) {
    Node& node = *it++;
    if (!node.isCall() || useCount.lookup(&node) != 0 || computesSymbol.count(&node) ||
        !mayErase(node))
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
