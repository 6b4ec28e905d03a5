//===- Fusion.cpp - Outlining pointwise and reduction groups into kernels -===//
//
// Greedy, in graph order: each node kernels can compute joins the groups of
// the nodes it reads from when the merged group is still legal, else starts
// its own. A group is legal when
//
//   - its nodes share one iteration space: one result shape for pointwise
//     groups; for groups with reductions, every reduction reduces the same
//     trailing dimensions of operands of one shape F, and every other node
//     has shape F ("inner") or a reduction's result shape ("outer"); inner
//     nodes read outer members only in their keepdim form, so they index
//     them by the outer index alone; outer nodes that drop the reduced
//     dimensions read a member, which places them on the outer loops
//     (made from kernel inputs alone, codegen would align them right);
//   - it is convex: no path leaves it through a node outside and comes back,
//     or the kernel call would have to run both before and after that node;
//   - all its nodes lie between the same two impure nodes (writes, random
//     draws, unknown overloads), so outlining moves no read across a write
//     and no random draw across another.
//
// Groups with a used result become kernels (but a reduction alone); the
// graph is then re-sorted stably between impure nodes so that every kernel
// call follows its inputs and precedes its users. docs/fusion.md has the
// reasons.
//
//===----------------------------------------------------------------------===//
#include "passes/Fusion.h"

#include "ir/kernel/ElementOps.h"
#include "ir/kernel/KernelOps.h"
#include "ir/kernel/KernelViews.h"
#include "passes/CallEffects.h"
#include "passes/Passes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <functional>
#include <queue>

namespace dync::transforms {

using namespace ir;

namespace {

using Shape = llvm::SmallVector<SymExpr, 4>;

bool isOne(SymExpr value) { return value.isConstant() && value.constantValue() == 1; }

/// What fusion knows about a node a kernel may compute.
struct Candidate {
  KernelOpClass opClass = KernelOpClass::None;
  /// The result's sizes.
  Shape shape;
  /// Reductions: the reduced operand's sizes, of which the last `reduced`
  /// are reduced.
  Shape full;
  unsigned reduced = 0;
};

/// The iteration space of a group with reductions: F and how many trailing
/// dimensions of it are reduced; `keep` and `drop` are the reductions'
/// result shapes with and without keepdim.
struct ReductionSpace {
  Shape full, keep, drop;
};

class Fusion {
public:
  Fusion(Module& module, Graph& graph) : module_(module), graph_(graph) {}

  llvm::Error run();

private:
  void analyze();
  std::optional<Candidate> describe(const Node& node) const;
  void formGroups();
  bool tryMerge(llvm::ArrayRef<unsigned> groups, Node* node);
  bool isLegal(llvm::ArrayRef<Node*> members) const;
  bool hasOneIterationSpace(llvm::ArrayRef<Node*> members) const;
  bool isConvex(llvm::ArrayRef<Node*> members) const;
  void outline(llvm::ArrayRef<Node*> members);
  llvm::Error reorder();

  /// A node nothing may move across: inputs, the return, and calls with
  /// effects (writes, random draws, overloads without traits).
  bool isFixed(const Node& node) const;
  /// Whether \p node copies its operand unchanged (a clone, a conversion)
  /// into a layout whose contiguous dimension is strided in the operand: a
  /// transpose. ATen's copy walks it in tiles; a kernel's innermost loop
  /// would gather one element per lane, several times slower, so such a
  /// copy stays an ATen call.
  static bool transposes(const Node& node);
  /// The nodes \p node reads: its operands, and the nodes computing the
  /// data-dependent symbols it mentions (`select(x, 0, u0)` reads the
  /// `item()` that gives u0, though no value links them).
  void forEachOperand(const Node& node, llvm::function_ref<void(Node*)> fn) const {
    node.forEachUse([&](const ValueRef& ref) {
      if (ref.node)
        fn(ref.node);
    });
    if (auto it = symbolProducers_.find(&node); it != symbolProducers_.end())
      for (Node* producer : it->second)
        fn(producer);
  }
  void noteSymbolProducers();

  Module& module_;
  Graph& graph_;
  llvm::DenseMap<const Node*, unsigned> position_;
  /// Per node, the nodes computing the unbacked symbols it mentions.
  llvm::DenseMap<const Node*, llvm::SmallVector<Node*, 2>> symbolProducers_;
  /// Which run of nodes between two fixed nodes a node lies in.
  llvm::DenseMap<const Node*, unsigned> segment_;
  llvm::DenseMap<const Node*, Candidate> candidates_;
  llvm::DenseMap<const Node*, unsigned> groupOf_;
  /// Members in graph order; emptied when merged into another group.
  std::vector<std::vector<Node*>> groups_;
  /// Views outside kernels that kernels now read through.
  llvm::DenseSet<const Node*> absorbedViews_;
};

bool Fusion::isFixed(const Node& node) const { return !node.isCall() || !callEffects(node).pure; }

bool Fusion::transposes(const Node& node) {
  llvm::Expected<ElementDescription> desc = describeElement(node);
  if (!desc) {
    llvm::consumeError(desc.takeError());
    return false;
  }
  if (desc->op != ElementOp::Convert || !desc->operands.front().isTensor())
    return false;
  const ValueRef& operand = desc->operands.front().value;
  const Type& from = *operand.node->resultType(operand.index);
  const Type& to = node.type();
  if (from.sizes().size() != to.sizes().size())
    return false;
  // The dimension the result is contiguous along, and its stride in the
  // operand.
  for (size_t d = 0; d < to.sizes().size(); ++d) {
    if (isOne(to.strides()[d]) && !isOne(to.sizes()[d]))
      return !isOne(from.strides()[d]);
  }
  return false;
}

std::optional<Candidate> Fusion::describe(const Node& node) const {
  if (!node.isCall() || node.isKernelCall() || !node.type().isTensor())
    return std::nullopt;
  // Only calls free of effects, and no views: a kernel writes fresh outputs,
  // which must not alias its inputs.
  CallEffects effects = callEffects(node);
  if (!effects.pure || effects.mayWrite || effects.mayAlias)
    return std::nullopt;
  KernelOpClass opClass = kernelOpClass(node);
  if (opClass == KernelOpClass::None)
    return std::nullopt;
  Candidate candidate;
  candidate.opClass = opClass;
  candidate.shape.assign(node.type().sizes().begin(), node.type().sizes().end());
  if (opClass == KernelOpClass::Pointwise)
    return transposes(node) ? std::nullopt : std::optional<Candidate>(candidate);

  llvm::Expected<ElementDescription> desc = describeElement(node);
  if (!desc) {
    llvm::consumeError(desc.takeError());
    return std::nullopt;
  }
  const ElementOperand& input = desc->operands.front();
  const Type* inputType = input.isTensor() && input.value.node
                              ? input.value.node->resultType(input.value.index)
                              : nullptr;
  if (!inputType || !inputType->isTensor())
    return std::nullopt;
  // Only trailing dimensions: the outer index is then shared by every node
  // of the kernel (docs/fusion.md).
  unsigned rank = inputType->sizes().size();
  unsigned reduced = desc->reducedDims.size();
  for (auto [i, dim] : llvm::enumerate(desc->reducedDims))
    if (dim != rank - reduced + i)
      return std::nullopt;
  candidate.full.assign(inputType->sizes().begin(), inputType->sizes().end());
  candidate.reduced = reduced;
  return candidate;
}

/// A data-dependent symbol has its value once the node whose result is it
/// (an `int<u0>`) or has it as a whole dimension has run; a node mentioning
/// it elsewhere depends on that node, which fusion and reordering keep.
void Fusion::noteSymbolProducers() {
  llvm::StringSet<> unbacked;
  for (const SymbolDecl& decl : graph_.symbols())
    if (decl.unbacked)
      unbacked.insert(decl.name);
  if (unbacked.empty())
    return;
  llvm::StringMap<Node*> producers;
  std::function<void(Node&, const Type&)> bind = [&](Node& node, const Type& type) {
    auto note = [&](SymExpr e) {
      if (e && e.isSymbol() && unbacked.contains(e.symbolName()))
        producers.try_emplace(e.symbolName(), &node);
    };
    if (type.isTensor())
      llvm::for_each(type.sizes(), note);
    else if (type.kind() == Type::Kind::Int)
      note(type.intValue());
    else if (type.isSequence())
      for (const Type& element : type.elements())
        bind(node, element);
  };
  for (Node& node : graph_.nodes()) {
    llvm::SmallVector<Node*, 2> reads;
    auto read = [&](SymExpr e) {
      if (!e)
        return;
      e.walkSymbols([&](SymExpr symbol) {
        Node* producer = producers.lookup(symbol.symbolName());
        if (producer && producer != &node && !llvm::is_contained(reads, producer))
          reads.push_back(producer);
      });
    };
    for (const Argument& arg : node.args())
      arg.forEachSym(read);
    for (const KeywordArgument& kwarg : node.kwargs())
      kwarg.value.forEachSym(read);
    node.type().walkSymExprs(read);
    if (!reads.empty())
      symbolProducers_[&node] = std::move(reads);
    bind(node, node.type());
  }
}

void Fusion::analyze() {
  noteSymbolProducers();
  unsigned position = 0, segment = 0;
  for (Node& node : graph_.nodes()) {
    position_[&node] = position++;
    if (isFixed(node)) {
      segment_[&node] = ++segment;
      ++segment;
      continue;
    }
    segment_[&node] = segment;
    if (std::optional<Candidate> candidate = describe(node))
      candidates_[&node] = std::move(*candidate);
  }
}

bool Fusion::hasOneIterationSpace(llvm::ArrayRef<Node*> members) const {
  const Candidate* reduction = nullptr;
  for (Node* member : members) {
    const Candidate& c = candidates_.find(member)->second;
    if (c.opClass != KernelOpClass::Reduction)
      continue;
    if (!reduction)
      reduction = &c;
    else if (c.full != reduction->full || c.reduced != reduction->reduced)
      return false;
  }
  if (!reduction) {
    const Shape& shape = candidates_.find(members.front())->second.shape;
    return llvm::all_of(members,
                        [&](Node* m) { return candidates_.find(m)->second.shape == shape; });
  }

  ReductionSpace space;
  space.full = reduction->full;
  unsigned outer = space.full.size() - reduction->reduced;
  space.drop.assign(space.full.begin(), space.full.begin() + outer);
  space.keep = space.drop;
  space.keep.append(reduction->reduced, graph_.context().constant(1));

  llvm::DenseSet<const Node*> inGroup(members.begin(), members.end());
  for (Node* member : members) {
    const Candidate& c = candidates_.find(member)->second;
    bool inner = c.opClass == KernelOpClass::Reduction || c.shape == space.full;
    if (!inner && c.shape != space.keep && c.shape != space.drop)
      return false;
    bool ok = true, readsGroup = false;
    forEachOperand(*member, [&](Node* producer) {
      if (!inGroup.contains(producer))
        return; // inputs of the kernel may broadcast any way torch allows
      readsGroup = true;
      const Shape& shape = candidates_.find(producer)->second.shape;
      // Inner nodes index by (outer, reduced) and read outer values
      // broadcast along the reduced dimensions; outer nodes index by the
      // outer index alone and read values of their own shape.
      if (inner ? shape != space.full && shape != space.keep : shape != c.shape)
        ok = false;
    });
    if (!ok)
      return false;
    // Codegen places a value where the values it is computed from lie; one
    // of fewer dimensions than F made from kernel inputs alone lines up
    // with F's last dimensions, as broadcasting aligns it, not with the
    // outer ones. An outer node without the reduced dimensions must
    // therefore read a value made in the group, which anchors it (sizes of
    // 1 are broadcast wherever they lie).
    bool dropsReduced = !inner && c.shape.size() < space.full.size();
    if (dropsReduced && !readsGroup && !llvm::all_of(c.shape, isOne))
      return false;
  }
  return true;
}

bool Fusion::isConvex(llvm::ArrayRef<Node*> members) const {
  // Walk from the first member to the last, marking the outside nodes that
  // depend on the group; a member reading one closes a cycle. Every other
  // group becomes one kernel call too, which runs after all that any of its
  // members reads: when one member depends on the group, so do all the
  // others' values. The walk marks the whole group then, and when that
  // marks a node it has passed, walks again from there, until nothing new
  // is marked. (Without this, two groups that each read the other through
  // different members, each convex on its own, form a cycle of kernels.)
  llvm::DenseSet<const Node*> inGroup(members.begin(), members.end());
  llvm::DenseSet<const Node*> dependent;
  const Node* start = members.front();
  while (start) {
    const Node* restart = nullptr;
    unsigned restartAt = 0;
    for (auto it = start->getIterator();; ++it) {
      const Node& node = *it;
      bool member = inGroup.contains(&node);
      bool readsGroup = false, readsDependent = false;
      forEachOperand(node, [&](Node* producer) {
        readsGroup |= inGroup.contains(producer);
        readsDependent |= dependent.contains(producer);
      });
      if (member && readsDependent)
        return false;
      if (!member && (readsGroup || readsDependent) && dependent.insert(&node).second) {
        auto group = groupOf_.find(&node);
        if (group != groupOf_.end())
          for (const Node* other : groups_[group->second]) {
            if (inGroup.contains(other) || !dependent.insert(other).second)
              continue;
            unsigned at = position_.lookup(other);
            if (at < position_.lookup(&node) && (!restart || at < restartAt)) {
              restart = other;
              restartAt = at;
            }
          }
      }
      if (&node == members.back())
        break;
    }
    start = restart;
  }
  return true;
}

bool Fusion::isLegal(llvm::ArrayRef<Node*> members) const {
  unsigned segment = segment_.lookup(members.front());
  if (llvm::any_of(members, [&](Node* m) { return segment_.lookup(m) != segment; }))
    return false;
  return hasOneIterationSpace(members) && isConvex(members);
}

bool Fusion::tryMerge(llvm::ArrayRef<unsigned> groups, Node* node) {
  std::vector<Node*> members;
  for (unsigned g : groups)
    llvm::append_range(members, groups_[g]);
  members.push_back(node);
  llvm::sort(members, [&](Node* a, Node* b) { return position_.lookup(a) < position_.lookup(b); });
  if (!isLegal(members))
    return false;
  unsigned target = groups.front();
  for (Node* member : members)
    groupOf_[member] = target;
  for (unsigned g : groups.drop_front())
    groups_[g].clear();
  groups_[target] = std::move(members);
  return true;
}

void Fusion::formGroups() {
  for (Node& node : graph_.nodes()) {
    if (!candidates_.contains(&node))
      continue;
    llvm::SmallVector<unsigned, 4> producers;
    forEachOperand(node, [&](Node* producer) {
      auto it = groupOf_.find(producer);
      if (it != groupOf_.end() && !llvm::is_contained(producers, it->second))
        producers.push_back(it->second);
    });
    // All the producers' groups at once, else the first one that fits.
    bool merged = !producers.empty() && tryMerge(producers, &node);
    if (!merged && producers.size() > 1)
      for (unsigned g : producers)
        if ((merged = tryMerge({g}, &node)))
          break;
    if (merged)
      continue;
    groupOf_[&node] = groups_.size();
    groups_.push_back({&node});
  }
}

void Fusion::outline(llvm::ArrayRef<Node*> members) {
  llvm::DenseSet<const Node*> inGroup(members.begin(), members.end());

  // The kernel's outputs: members used outside it, in graph order.
  llvm::DenseSet<const Node*> used;
  for (Node& node : graph_.nodes())
    if (!inGroup.contains(&node))
      forEachOperand(node, [&](Node* producer) {
        if (inGroup.contains(producer))
          used.insert(producer);
      });
  std::vector<Node*> outputs;
  for (Node* member : members)
    if (used.contains(member))
      outputs.push_back(member);
  if (outputs.empty())
    return; // dead; DCE removes it

  // Its inputs: the values members read from outside, in order of first
  // use. A view of such a value is read through (KernelViews.h): the kernel
  // takes the view's root as its input and holds the chain of views itself,
  // root first; run() erases the views outside that nothing reads any more.
  std::vector<ValueRef> inputs;
  std::vector<Node*> views;
  std::function<void(const ValueRef&)> read = [&](const ValueRef& ref) {
    if (inGroup.contains(ref.node) || llvm::is_contained(inputs, ref) ||
        llvm::is_contained(views, ref.node))
      return;
    ValueRef root = viewedBase(ref, graph_.context()).root;
    if (root == ref || inGroup.contains(root.node)) {
      inputs.push_back(ref);
      return;
    }
    read(ref.node->args()[0].valueRef());
    views.push_back(ref.node);
  };
  for (Node* member : members)
    member->forEachUse(read);

  Graph& kernel = module_.addKernel(module_.freshKernelName());
  // Canonical names inside the kernel, so that equal groups in different
  // graphs (or layers) give equal kernel text, which codegen compiles once.
  std::vector<Node*> inputNodes;
  llvm::StringSet<> symbols;
  auto noteSymbols = [&](SymExpr e) {
    e.walkSymbols([&](SymExpr symbol) { symbols.insert(symbol.symbolName()); });
  };
  for (auto [i, ref] : llvm::enumerate(inputs)) {
    const Type& type = *ref.node->resultType(ref.index);
    type.walkSymExprs(noteSymbols);
    inputNodes.push_back(kernel.append(Node::input("in" + std::to_string(i), type, "")));
  }
  llvm::DenseMap<const Node*, Node*> clones;
  auto clone = [&](const Node* node, std::string name) {
    std::vector<Argument> args = node->args();
    std::vector<KeywordArgument> kwargs = node->kwargs();
    auto remap = [&](Argument& arg) {
      arg.forEachSym(noteSymbols);
      arg.forEachValue([&](ValueRef& ref) {
        if (Node* clone = clones.lookup(ref.node))
          ref.node = clone;
        else
          ref = ValueRef{inputNodes[llvm::find(inputs, ref) - inputs.begin()], std::nullopt};
      });
    };
    llvm::for_each(args, remap);
    for (KeywordArgument& kwarg : kwargs)
      remap(kwarg.value);
    node->type().walkSymExprs(noteSymbols);
    clones[node] = kernel.append(
        Node::call(std::move(name), node->op(), std::move(args), std::move(kwargs), node->type()));
    // Each node keeps the user's line it came from, so kernel codegen can
    // name it.
    clones[node]->setLocation(node->location());
  };
  for (auto [i, view] : llvm::enumerate(views)) {
    clone(view, "v" + std::to_string(i));
    absorbedViews_.insert(view);
  }
  for (auto [i, member] : llvm::enumerate(members))
    clone(member, std::to_string(i));
  std::vector<Argument> results;
  for (Node* output : outputs)
    results.push_back(Argument::value(clones.lookup(output)));
  Node* kernelOutput = kernel.append(Node::output(
      results.size() == 1 ? std::move(results.front()) : Argument::tuple(std::move(results))));
  kernelOutput->setLocation(members.back()->location());
  for (const SymbolDecl& decl : graph_.symbols())
    if (symbols.contains(decl.name))
      kernel.symbols().push_back({decl.name, decl.range, llvm::SMLoc()});

  // The call, where the last member was; reorder() moves users of earlier
  // members after it. One output keeps its name, so its users read the same.
  std::vector<Argument> args;
  for (const ValueRef& ref : inputs)
    args.push_back(Argument::value(ref.node, ref.index));
  Node* last = members.back();
  std::string name = outputs.size() == 1 ? outputs.front()->name() : last->name();
  Node* call =
      graph_.insert(last->getIterator(), Node::call(name, "@" + kernel.name(), std::move(args), {},
                                                    *kernelResultType(kernel)));
  // The call stands where the last member stood, and takes its location.
  call->setLocation(last->location());
  position_[call] = position_.lookup(last);
  segment_[call] = segment_.lookup(last);
  for (Node& node : graph_.nodes()) {
    if (inGroup.contains(&node) || &node == call)
      continue;
    auto redirect = [&](Argument& arg) {
      arg.forEachValue([&](ValueRef& ref) {
        auto it = llvm::find(outputs, ref.node);
        if (it == outputs.end())
          return;
        ref.node = call;
        ref.index =
            outputs.size() == 1 ? std::nullopt : std::optional<unsigned>(it - outputs.begin());
      });
    };
    llvm::for_each(node.args(), redirect);
    for (KeywordArgument& kwarg : node.kwargs())
      redirect(kwarg.value);
  }
  // The call reads the symbols its members and views read; a node that
  // read a symbol a member computed now reads it from the call.
  llvm::SmallVector<Node*, 2> callReads;
  for (const llvm::ArrayRef<Node*> nodes : {members, llvm::ArrayRef<Node*>(views)})
    for (Node* node : nodes)
      if (auto it = symbolProducers_.find(node); it != symbolProducers_.end())
        for (Node* producer : it->second)
          if (!inGroup.contains(producer) && !llvm::is_contained(callReads, producer))
            callReads.push_back(producer);
  if (!callReads.empty())
    symbolProducers_[call] = std::move(callReads);
  for (auto& [node, producers] : symbolProducers_)
    for (Node*& producer : producers)
      if (inGroup.contains(producer))
        producer = call;
  for (Node* member : llvm::reverse(members)) {
    symbolProducers_.erase(member);
    graph_.erase(member);
  }
}

llvm::Error Fusion::reorder() {
  std::vector<Node*> order;
  for (Node& node : graph_.nodes())
    order.push_back(&node);
  std::vector<Node*> sorted;
  for (size_t begin = 0; begin < order.size();) {
    if (isFixed(*order[begin])) {
      sorted.push_back(order[begin++]);
      continue;
    }
    // A run between fixed nodes: a stable topological sort, each node as
    // early as its operands allow, ties in the original order.
    size_t end = begin;
    while (end < order.size() && !isFixed(*order[end]))
      ++end;
    llvm::DenseMap<const Node*, size_t> local;
    for (size_t i = begin; i < end; ++i)
      local[order[i]] = i - begin;
    std::vector<unsigned> pending(end - begin, 0);
    std::vector<std::vector<size_t>> users(end - begin);
    for (size_t i = begin; i < end; ++i) {
      llvm::SmallDenseSet<size_t, 4> producers;
      forEachOperand(*order[i], [&](Node* producer) {
        auto it = local.find(producer);
        if (it != local.end() && producers.insert(it->second).second)
          users[it->second].push_back(i - begin);
      });
      pending[i - begin] = producers.size();
    }
    std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
    for (size_t i = 0; i < pending.size(); ++i)
      if (pending[i] == 0)
        ready.push(i);
    size_t emitted = 0;
    while (!ready.empty()) {
      size_t i = ready.top();
      ready.pop();
      sorted.push_back(order[begin + i]);
      ++emitted;
      for (size_t user : users[i])
        if (--pending[user] == 0)
          ready.push(user);
    }
    if (emitted != end - begin)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "fusion: graph @" + graph_.name() +
                                         " has a cycle after outlining kernels");
    begin = end;
  }
  for (Node* node : sorted)
    graph_.nodes().splice(graph_.nodes().end(), graph_.nodes(), node->getIterator());
  return llvm::Error::success();
}

llvm::Error Fusion::run() {
  analyze();
  formGroups();
  bool changed = false;
  for (std::vector<Node*>& members : groups_) {
    // A pointwise node alone is outlined too: its kernel saves no memory
    // traffic, but skips the dispatcher and TensorIterator's setup, most of
    // an ATen call on tensors of thousands of elements. A reduction alone
    // stays an ATen call: ATen splits long rows, and a single full
    // reduction, across threads, where a kernel splits only its rows.
    if (members.size() == 1 &&
        candidates_.lookup(members.front()).opClass == KernelOpClass::Reduction)
      continue;
    size_t kernels = module_.kernels().size();
    outline(members);
    changed |= module_.kernels().size() != kernels;
  }
  eraseUnusedCalls(graph_, [&](const Node& node) { return absorbedViews_.contains(&node); });
  return changed ? reorder() : llvm::Error::success();
}

} // namespace

llvm::Error runFusion(Module& module, Graph& graph) {
  if (graph.isKernel())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "fusion: @" + graph.name() +
                                       " is a kernel; fusion runs on entry graphs");
  return Fusion(module, graph).run();
}

llvm::Error runFusion(Module& module) {
  // Index, not iterator: kernels are added to the module as graphs are fused.
  for (size_t i = 0; i < module.graphs().size(); ++i)
    if (llvm::Error error = runFusion(module, *module.graphs()[i]))
      return error;
  return llvm::Error::success();
}

} // namespace dync::transforms
