//===- MemoryPlan.cpp - Kernel outputs sharing buffers --------------------===//

#include "passes/MemoryPlan.h"

#include "passes/CallEffects.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>

using namespace dync;
using namespace dync::transforms;

namespace {

/// How long one kernel output's storage is in use, in node positions
/// (inputs count), both ends included: from its call to the last node that
/// reads it or a view of it.
struct Lifetime {
  const ir::Node* call = nullptr;
  unsigned output = 0;
  unsigned def = 0;
  unsigned end = 0;
  /// The graph returns it, or a value that may share its storage.
  bool escapes = false;
};

unsigned numOutputs(const ir::Node& call) {
  return call.type().isSequence() ? call.type().elements().size() : 1;
}

bool refersTo(const ir::ValueRef& ref, const ir::Node* call, unsigned output) {
  return ref.node == call && (!ref.index || *ref.index == output);
}

/// The lifetime of every output of every kernel call, in graph order.
std::vector<Lifetime> computeLifetimes(const ir::Graph& graph) {
  llvm::DenseMap<const ir::Node*, unsigned> position;
  std::vector<const ir::Node*> order;
  for (const ir::Node& node : graph.nodes()) {
    position[&node] = order.size();
    order.push_back(&node);
  }
  std::vector<Lifetime> lifetimes;
  for (const ir::Node* call : order) {
    if (!call->isKernelCall())
      continue;
    unsigned def = position[call];
    for (unsigned i = 0; i < numOutputs(*call); ++i) {
      Lifetime life{call, i, def, def, false};
      // Values that may share this output's storage: results of calls that
      // may alias an argument reading it, transitively (views, in-place
      // ops, and calls whose effects torch does not record). Their reads
      // keep the storage live, and returning one lets it escape.
      llvm::SmallPtrSet<const ir::Node*, 8> aliases;
      for (unsigned p = def + 1; p < order.size(); ++p) {
        const ir::Node* user = order[p];
        bool reads = false;
        user->forEachUse([&](const ir::ValueRef& ref) {
          reads |= refersTo(ref, call, i) || aliases.count(ref.node);
        });
        if (!reads)
          continue;
        life.end = p;
        if (user->isOutput())
          life.escapes = true;
        else if (user->isCall() && callEffects(*user).mayAlias)
          aliases.insert(user);
      }
      lifetimes.push_back(life);
    }
  }
  return lifetimes;
}

std::string label(const ir::Node& call, unsigned output) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << '%' << call.name();
  if (call.type().isSequence())
    os << '#' << output;
  return text;
}

} // namespace

std::vector<std::optional<unsigned>> dync::transforms::kernelBufferSlots(const ir::Node& call) {
  std::vector<std::optional<unsigned>> slots(numOutputs(call));
  for (const ir::KeywordArgument& kw : call.kwargs()) {
    if (kw.name != kBuffersKeyword || kw.value.kind() != ir::Argument::Kind::List)
      continue;
    const std::vector<ir::Argument>& elements = kw.value.elements();
    for (unsigned i = 0; i < elements.size() && i < slots.size(); ++i)
      if (elements[i].kind() == ir::Argument::Kind::Sym && elements[i].symValue().isConstant())
        slots[i] = static_cast<unsigned>(elements[i].symValue().constantValue());
  }
  return slots;
}

llvm::Error dync::transforms::runMemoryPlanning(ir::Graph& graph) {
  std::vector<Lifetime> lifetimes = computeLifetimes(graph);
  // Greedy in graph order: each output takes the first slot free at its
  // call. Lifetimes are closed intervals, so an output never shares with a
  // value its own call reads: kernel outputs must not overlap their inputs.
  std::vector<unsigned> slotEnd;
  std::vector<std::vector<const Lifetime*>> members;
  std::map<std::pair<const ir::Node*, unsigned>, unsigned> slotOf;
  for (const Lifetime& life : lifetimes) {
    if (life.escapes)
      continue;
    // A buffer is allocated at its first member's call with the most any
    // member needs; a size computed from data later is not known there.
    const ir::Type& type = life.call->type().isSequence()
                               ? life.call->type().elements()[life.output]
                               : life.call->type();
    bool dataDependent = false;
    type.walkSymExprs(
        [&](ir::SymExpr e) { dataDependent |= ir::mentionsUnbacked(e, graph.symbols()); });
    if (dataDependent)
      continue;
    unsigned slot = 0;
    while (slot < slotEnd.size() && slotEnd[slot] >= life.def)
      ++slot;
    if (slot == slotEnd.size()) {
      slotEnd.push_back(0);
      members.emplace_back();
    }
    slotEnd[slot] = life.end;
    members[slot].push_back(&life);
  }
  // Slots are numbered in order of first use, those with one member dropped.
  unsigned next = 0;
  for (const std::vector<const Lifetime*>& slot : members) {
    if (slot.size() < 2)
      continue;
    for (const Lifetime* life : slot)
      slotOf[{life->call, life->output}] = next;
    ++next;
  }

  ir::Context& ctx = graph.context();
  for (ir::Node& node : graph.nodes()) {
    if (!node.isKernelCall())
      continue;
    std::vector<ir::KeywordArgument>& kwargs = node.kwargs();
    llvm::erase_if(kwargs,
                   [](const ir::KeywordArgument& kw) { return kw.name == kBuffersKeyword; });
    std::vector<ir::Argument> plan;
    bool any = false;
    for (unsigned i = 0; i < numOutputs(node); ++i) {
      auto it = slotOf.find({&node, i});
      any |= it != slotOf.end();
      plan.push_back(it == slotOf.end() ? ir::Argument::none()
                                        : ir::Argument::sym(ctx.constant(it->second)));
    }
    if (any)
      kwargs.push_back({std::string(kBuffersKeyword), ir::Argument::list(std::move(plan))});
  }
  return llvm::Error::success();
}

llvm::Error dync::transforms::checkMemoryPlan(const ir::Graph& graph) {
  std::map<unsigned, std::vector<const Lifetime*>> bySlot;
  std::vector<Lifetime> lifetimes = computeLifetimes(graph);
  llvm::DenseMap<const ir::Node*, std::vector<std::optional<unsigned>>> plans;
  for (const Lifetime& life : lifetimes) {
    auto [it, inserted] = plans.try_emplace(life.call);
    if (inserted)
      it->second = kernelBufferSlots(*life.call);
    std::optional<unsigned> slot = it->second[life.output];
    if (!slot)
      continue;
    if (life.escapes)
      return llvm::createStringError(
          "graph @" + graph.name() + ": kernel output " + label(*life.call, life.output) +
          " is in buffer " + std::to_string(*slot) + ", but the graph returns it or a view of it" +
          life.call->location().suffix());
    for (const Lifetime* other : bySlot[*slot])
      if (other->def <= life.end && life.def <= other->end)
        return llvm::createStringError(
            "graph @" + graph.name() + ": kernel outputs " + label(*other->call, other->output) +
            " and " + label(*life.call, life.output) + " share buffer " + std::to_string(*slot) +
            " but are live at the same time" + life.call->location().suffix());
    bySlot[*slot].push_back(&life);
  }
  return llvm::Error::success();
}
