//===- FallBackChecks.cpp - Fall-back checks before random draws ----------===//
//
// A decision on tensor data specialized to the example's side is checked
// where the program decided (DataBranches.cpp); a call taking the other
// side then runs the program's original code, which is sound only while
// the graph has done nothing the caller could see. Random operators before
// the decision (attention, even with dropout_p=0, is tagged random) would
// have drawn from the generator by then, and the original code would draw
// again. So each fall-back check whose condition is computed without
// random numbers is moved, with the calls computing it, to before the
// first random operator, provided nothing between them writes a tensor
// (the moved calls would then read it before the write). The example run
// specializes a decision under the same conditions
// (oracle_example_values.py), so a call taking the other side falls back.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/DataBranches.h"

#include "ir/Graph.h"
#include "ir/OpTraits.h"
#include "ir/RunTimeCheck.h"
#include "ir/ScalarOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace dync::capture {

namespace {

bool isFallBackCheck(const ir::Node& node) {
  return node.isCall() && node.op() == "aten::_assert_async.msg" && node.args().size() == 2 &&
         node.args()[1].kind() == ir::Argument::Kind::String &&
         ir::fallBackCheckWhat(node.args()[1].stringValue()).has_value();
}

/// Whether \p node may be moved before a random operator: a call that
/// neither draws nor writes. Python's arithmetic on numbers changes
/// nothing.
bool movable(const ir::Node& node) {
  if (!node.isCall())
    return false;
  if (ir::scalarOpOf(node))
    return true;
  const ir::OpTraits* traits = ir::findOpTraits(node.op());
  return traits && !traits->randomSeeded && !traits->mutatesArgument;
}

} // namespace

void runFallBackChecksFirst(ir::Graph& graph) {
  ir::Graph::NodeList& nodes = graph.nodes();
  ir::Node* firstRandom = nullptr;
  for (auto it = nodes.begin(); it != nodes.end();) {
    ir::Node& node = *it++;
    if (!node.isCall())
      continue;
    if (!firstRandom) {
      const ir::OpTraits* traits = ir::findOpTraits(node.op());
      if (traits && traits->randomSeeded && !ir::scalarOpOf(node))
        firstRandom = &node;
      continue;
    }
    if (!isFallBackCheck(node)) {
      const ir::OpTraits* traits = ir::scalarOpOf(node) ? nullptr : ir::findOpTraits(node.op());
      // A write after the first draw: later checks stay where they are.
      if (!ir::scalarOpOf(node) && (!traits || traits->mutatesArgument))
        return;
      continue;
    }
    // The calls the check's condition needs that come after the first
    // random operator, in graph order.
    llvm::DenseMap<const ir::Node*, unsigned> position;
    unsigned index = 0;
    for (const ir::Node& each : nodes)
      position[&each] = index++;
    unsigned from = position[firstRandom];
    llvm::SmallVector<ir::Node*, 8> cone;
    llvm::SmallVector<const ir::Node*, 8> work{&node};
    llvm::DenseMap<const ir::Node*, bool> seen;
    bool ok = true;
    while (!work.empty() && ok) {
      const ir::Node* current = work.pop_back_val();
      current->forEachUse([&](const ir::ValueRef& used) {
        const ir::Node* def = used.node;
        if (!def || def->isInput() || position[def] < from || seen[def])
          return;
        seen[def] = true;
        if (!movable(*def)) {
          ok = false;
          return;
        }
        cone.push_back(const_cast<ir::Node*>(def));
        work.push_back(def);
      });
    }
    if (!ok)
      continue;
    llvm::sort(cone,
               [&](const ir::Node* a, const ir::Node* b) { return position[a] < position[b]; });
    cone.push_back(&node);
    for (ir::Node* moved : cone)
      nodes.splice(firstRandom->getIterator(), nodes, moved->getIterator());
  }
}

} // namespace dync::capture
