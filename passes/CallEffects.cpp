//===- CallEffects.cpp - What a call may do besides computing its result --===//
#include "passes/CallEffects.h"

#include "ir/Graph.h"
#include "ir/OpTraits.h"
#include "ir/ScalarOps.h"

#include <cassert>

namespace dync::transforms {

using namespace ir;

CallEffects callEffects(const Node& call) {
  CallEffects effects;
  if (!call.isCall() || call.type().isNone())
    return effects;
  // A generated kernel reads its inputs and writes only the fresh outputs
  // the calling graph allocates for it (docs/passes.md).
  if (call.isKernelCall())
    return {/*pure=*/true, /*mayWrite=*/false, /*mayAlias=*/false};
  // Python arithmetic on numbers writes and aliases nothing.
  if (scalarOpOf(call))
    return {/*pure=*/scalarOpIsPure(call), /*mayWrite=*/false, /*mayAlias=*/false};
  const OpTraits* traits = findOpTraits(call.op());
  if (!traits)
    return effects;
  effects.pure = traits->isPure();
  effects.mayWrite = traits->mutatesArgument;
  effects.mayAlias = traits->returnsAlias || traits->mutatesArgument;
  return effects;
}

AliasClasses::AliasClasses(const Graph& graph) {
  for (const Node& node : graph.nodes()) {
    ids_[&node] = parent_.size();
    parent_.push_back(parent_.size());
  }
  const Node* firstInput = nullptr;
  for (const Node& node : graph.nodes()) {
    if (node.isInput()) {
      if (firstInput)
        unite(id(firstInput), id(&node));
      else
        firstInput = &node;
      continue;
    }
    if (!node.isCall() || !callEffects(node).mayAlias)
      continue;
    node.forEachUse([&](const ValueRef& use) {
      if (use.node)
        unite(id(&node), id(use.node));
    });
  }

  flags_.resize(parent_.size());
  if (firstInput)
    flags_[classOf(firstInput)].input = true;
  for (const Node& node : graph.nodes()) {
    if (node.isCall() && callEffects(node).mayWrite)
      node.forEachUse([&](const ValueRef& use) {
        if (use.node)
          flags_[classOf(use.node)].written = true;
      });
  }
  for (const ValueRef& leaf : outputLeaves(graph))
    flags_[classOf(leaf.node)].returned = true;
}

unsigned AliasClasses::id(const Node* node) const {
  auto it = ids_.find(node);
  assert(it != ids_.end() && "node of another graph");
  return it->second;
}

unsigned AliasClasses::find(unsigned id) const {
  while (parent_[id] != id) {
    parent_[id] = parent_[parent_[id]];
    id = parent_[id];
  }
  return id;
}

unsigned AliasClasses::unite(unsigned a, unsigned b) {
  a = find(a);
  b = find(b);
  if (a != b)
    parent_[b] = a;
  return a;
}

unsigned AliasClasses::classOf(const Node* node) const { return find(id(node)); }

void AliasClasses::merge(const Node* from, const Node* to) {
  Flags a = flags(from), b = flags(to);
  unsigned root = unite(id(to), id(from));
  flags_[root] = {a.written || b.written, a.returned || b.returned, a.input || b.input};
}

} // namespace dync::transforms
