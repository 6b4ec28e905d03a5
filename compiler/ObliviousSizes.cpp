//===- ObliviousSizes.cpp - One graph for sizes torch specializes ---------===//
#include "compiler/ObliviousSizes.h"

#include "frontend/oracle/SymSubstitution.h"
#include "ir/AutogradFunction.h"
#include "ir/OpTraits.h"
#include "ir/Parser.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

namespace dync::compiler {

namespace {

/// A graph with some of its symbols set to sizes: a copy, read back from
/// the text of the original (which the parser reproduces exactly), so the
/// original is left as it is.
struct GraphAtSizes {
  llvm::SourceMgr sourceMgr;
  std::unique_ptr<ir::Module> module;
  ir::Graph* graph = nullptr;
};

/// \p relation's comparisons that are not between constants, or nullopt
/// when one between constants holds (the relation then holds); empty when
/// every comparison was between constants and none held.
std::optional<std::vector<ir::Comparison>> undecided(const ir::Relation& relation) {
  std::vector<ir::Comparison> left;
  for (const ir::Comparison& comparison : relation.comparisons()) {
    if (!comparison.lhs.isConstant() || !comparison.rhs.isConstant()) {
      left.push_back(comparison);
      continue;
    }
    llvm::Expected<bool> holds = comparison.evaluate({});
    if (!holds)
      llvm::consumeError(holds.takeError()); // cannot be computed: does not hold
    else if (*holds)
      return std::nullopt;
  }
  return left;
}

llvm::Expected<std::unique_ptr<GraphAtSizes>> graphAtSizes(const ir::Graph& graph,
                                                           const SizePoint& sizes) {
  auto copy = std::make_unique<GraphAtSizes>();
  std::string text;
  llvm::raw_string_ostream os(text);
  graph.print(os);
  // A backward graph has no guards, and no guard block may name it.
  if (!graph.isBackward())
    graph.guards().print(os, graph.name());
  copy->sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, graph.name()),
                                     llvm::SMLoc());
  llvm::Expected<std::unique_ptr<ir::Module>> module =
      ir::parseModule(copy->sourceMgr, graph.context());
  if (!module)
    return module.takeError();
  copy->module = std::move(*module);
  llvm::ArrayRef<std::unique_ptr<ir::Graph>> read =
      graph.isBackward() ? copy->module->backwards() : copy->module->graphs();
  if (read.size() != 1)
    return llvm::createStringError("the graph's text did not read back as one graph");
  ir::Graph& at = *read.front();
  copy->graph = &at;

  ir::Context& context = graph.context();
  llvm::StringMap<ir::SymExpr> replacements;
  for (const auto& [symbol, size] : sizes)
    replacements[symbol] = context.constant(size);
  oracle::SymSubstitution substitution(std::move(replacements));
  std::vector<std::string> relationTexts;
  for (const ir::Relation& relation : at.relations()) {
    llvm::raw_string_ostream rs(relationTexts.emplace_back());
    relation.print(rs);
  }
  substitution.apply(at);

  // A relation over the set symbols alone is now a constant: true says
  // nothing at these sizes, false means the graph does not serve them.
  std::vector<ir::Relation> relations;
  for (const auto& [index, relation] : llvm::enumerate(at.relations())) {
    std::optional<std::vector<ir::Comparison>> left = undecided(relation);
    if (!left)
      continue; // a comparison of constants holds
    if (left->empty())
      return llvm::createStringError("it assumes " + relationTexts[index] +
                                     graph.relations()[index].origin);
    ir::Relation kept = relation;
    kept.lhs = left->front().lhs;
    kept.kind = left->front().kind;
    kept.rhs = left->front().rhs;
    kept.alternatives.assign(left->begin() + 1, left->end());
    relations.push_back(std::move(kept));
  }
  at.relations() = std::move(relations);
  std::vector<ir::SymbolDecl> symbols;
  for (const ir::SymbolDecl& decl : at.symbols()) {
    if (!sizes.count(decl.name)) {
      symbols.push_back(decl);
      continue;
    }
    if (!decl.range.contains(sizes.at(decl.name)) &&
        !(decl.range.lo && *decl.range.lo == sizes.at(decl.name) + 1))
      return llvm::createStringError("its range of " + decl.name + " does not reach " +
                                     std::to_string(sizes.at(decl.name)));
  }
  at.symbols() = std::move(symbols);

  // The guards: a tensor's type is substituted; an int input set to a size
  // is the constant a capture at that size pins with `equals`.
  ir::GuardSet guards;
  guards.localNames() = at.guards().localNames();
  guards.setLoc(at.guards().loc());
  for (ir::Guard guard : at.guards().guards()) {
    if (guard.tensorType)
      guard.tensorType = substitution.apply(*guard.tensorType);
    if (guard.kind == ir::GuardKind::SymInt && guard.constant) {
      ir::SymExpr value = substitution.apply(guard.constant->symValue());
      guard = value.isConstant() ? ir::Guard::equals(guard.source, ir::Argument::sym(value))
                                 : ir::Guard::symInt(guard.source, value);
    }
    guards.add(std::move(guard));
  }
  at.guards() = std::move(guards);
  return copy;
}

std::string lineOf(const ir::Node& node) {
  std::string text;
  llvm::raw_string_ostream os(text);
  node.print(os, /*withLocation=*/false);
  return text;
}

/// A type's text with the strides of its size-1 dimensions left out: they
/// address nothing, and torch picks them freely. The tensors of a tuple or
/// list (an operator's several results) are written the same way.
std::string layoutText(const ir::Type& type, bool withStrides = true) {
  if (type.isSequence()) {
    std::string text = type.kind() == ir::Type::Kind::Tuple ? "tuple<" : "list<";
    for (const auto& [i, element] : llvm::enumerate(type.elements()))
      text += (i ? ", " : "") + layoutText(element, withStrides);
    return text + ">";
  }
  if (!type.isTensor()) {
    std::string text;
    llvm::raw_string_ostream os(text);
    type.print(os);
    return text;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << ir::spelling(type.dtype()) << '[';
  for (size_t d = 0; d < type.sizes().size(); ++d) {
    os << (d ? ", " : "");
    type.sizes()[d].print(os);
    if (withStrides && !type.strides().empty() &&
        !(type.sizes()[d].isConstant() && type.sizes()[d].constantValue() == 1)) {
      os << ':';
      type.strides()[d].print(os);
    }
  }
  os << "] " << (type.requiresGrad() ? "grad" : "");
  return text;
}

std::optional<std::string> differenceAt(const ir::Graph& general, const ir::Graph& special,
                                        const SizePoint& sizes);

/// Compares a general graph, with symbols set to sizes, with the graph
/// captured at those sizes, node by node. The two are one program when
/// they run the same operators on the same values in the same order. One
/// difference is allowed, the one torch's contiguity checks make: where the
/// general graph copies a tensor to a contiguous layout before a view (a
/// `reshape` of a transposed tensor) and the tensor is already viewable at
/// these sizes, the special graph views it directly. The copy holds the same
/// values, so the general graph computes the same, as long as nothing can
/// tell a copy from a view: no operator writes to a tensor, and no result
/// of the graph is the copy or a view of it. Tensors after the copy may be
/// laid out differently, which ATen's operators (as opposed to `as_strided`,
/// refused) do not depend on; results must have the same layout.
class ProgramMatch {
public:
  /// \p generalModule holds the backward graphs \p general's autograd
  /// nodes name (\p general is a copy read back alone), set to \p sizes.
  ProgramMatch(const ir::Graph& general, const ir::Graph& special, const ir::Module* generalModule,
               const SizePoint& sizes)
      : general_(general), special_(special), generalModule_(generalModule), sizes_(sizes) {}

  /// None when the same program, else the first difference.
  std::optional<std::string> run() {
    auto g = general_.nodes().begin(), gEnd = general_.nodes().end();
    auto s = special_.nodes().begin(), sEnd = special_.nodes().end();
    while (g != gEnd && s != sEnd) {
      // An int input set to a size is the constant the capture at that size
      // holds in its place (its `equals` guard is compared with the rest).
      // A backward graph's inputs have no sources: an int input there is
      // the special graph's only if it is the same int.
      if (g->isInput() && g->type().kind() == ir::Type::Kind::Int &&
          g->type().intValue().isConstant() &&
          !(s->isInput() && s->source() == g->source() &&
            layoutText(s->type()) == layoutText(g->type()))) {
        constants_[&*g] = g->type().intValue().constantValue();
        ++g;
        continue;
      }
      if (std::optional<std::string> why = sameNode(*g, *s)) {
        if (isElidableCopy(*g, *s)) {
          const ir::ValueRef& input = g->args().front().valueRef();
          map_[&*g] = map_.lookup(input.node);
          copies_.insert(&*g);
          relaidOut_.insert(&*g);
          ++g;
          continue;
        }
        if (const ir::Node* fill = elidableFill(*g, std::next(g), gEnd)) {
          const ir::ValueRef& input = fill->args()[1].valueRef();
          map_[fill] = map_.lookup(input.node);
          copies_.insert(&*g);
          copies_.insert(fill);
          fills_.insert(fill);
          g = std::next(g, 2);
          continue;
        }
        return why;
      }
      ++g;
      ++s;
    }
    if (g != gEnd)
      return "the general graph goes on with `" + lineOf(*g) + "`" + locationOf(*g);
    if (s != sEnd)
      return "it goes on with `" + lineOf(*s) + "`" + locationOf(*s);
    return std::nullopt;
  }

private:
  static std::string locationOf(const ir::Node& node) {
    return node.location().empty() ? "" : " at " + node.location().describe();
  }

  std::string differs(const ir::Node& g, const ir::Node& s) {
    return "it computes `" + lineOf(s) + "` where the general graph computes `" + lineOf(g) + "`" +
           locationOf(s.location().empty() ? g : s);
  }

  /// A contiguous copy of a tensor the special graph uses as it is.
  bool isElidableCopy(const ir::Node& g, const ir::Node& s) {
    if (!g.isCall() || g.op() != "aten::clone.default" || g.args().size() != 1 ||
        !g.args().front().isValue() || !map_.count(g.args().front().valueRef().node))
      return false;
    for (const ir::KeywordArgument& keyword : g.kwargs())
      if (keyword.name != "memory_format" ||
          (keyword.value.kind() == ir::Argument::Kind::MemoryFormat &&
           keyword.value.memoryFormatValue() != ir::MemoryFormat::Contiguous))
        return false;
    (void)s;
    return writesMissCopy(g, *g.args().front().valueRef().node);
  }

  /// The other spelling of a copy: `empty_strided` then `copy_` of a tensor
  /// into it, as capture lays out an operator's result as torch's meta
  /// function does. Where the special graph's tensor already has that
  /// layout at these sizes, it leaves both out. Returns the `copy_` when
  /// \p empty and the node after it, \p next, are such a copy the special
  /// graph may leave out.
  template <typename Iterator>
  const ir::Node* elidableFill(const ir::Node& empty, Iterator next, Iterator end) {
    if (!empty.isCall() || empty.op() != "aten::empty_strided.default" || next == end)
      return nullptr;
    const ir::Node& fill = *next;
    if (!fill.isCall() || fill.op() != "aten::copy_.default" || fill.args().size() < 2 ||
        !fill.args()[0].isValue() || fill.args()[0].valueRef().node != &empty ||
        !fill.args()[1].isValue())
      return nullptr;
    for (size_t i = 2; i < fill.args().size(); ++i)
      if (fill.args()[i].kind() != ir::Argument::Kind::Bool || fill.args()[i].boolValue())
        return nullptr; // non_blocking
    const ir::Node* input = fill.args()[1].valueRef().node;
    const ir::Node* special = map_.lookup(input);
    if (!special || !empty.type().isTensor() || !special->type().isTensor() ||
        layoutText(empty.type()) != layoutText(special->type()) ||
        !writesMissCopy(empty, *input, &fill))
      return nullptr;
    return &fill;
  }

  /// Whether no write in either graph can tell the general graph's \p copy
  /// of \p input from the special graph's view of it: every operator
  /// that writes writes its first argument only, into storage its graph
  /// made (the result of an operator that is not a view, as `copy_` into an
  /// `empty_strided` buffer fills it) other than the copied tensor's, a
  /// copy's, or an input's.
  bool writesMissCopy(const ir::Node& copy, const ir::Node& input,
                      const ir::Node* filling = nullptr) {
    const ir::Node* special = map_.lookup(&input);
    if (!special)
      return false;
    for (auto [graph, copied] :
         {std::pair(&general_, storageOf(&input)), std::pair(&special_, storageOf(special))})
      for (const ir::Node& node : graph->nodes()) {
        // A fill left out, this one or an earlier one, only makes its copy.
        if (!node.isCall() || &node == filling || fills_.count(&node))
          continue;
        const ir::OpTraits* traits = ir::findOpTraits(node.op());
        if (traits && !traits->mutatesArgument)
          continue;
        if (!traits || !traits->functionalTwin || node.args().empty() ||
            !node.args().front().isValue())
          return false;
        const ir::Node* written = storageOf(node.args().front().valueRef().node);
        if (written == copied || written == &copy || copies_.count(written) ||
            !isFreshStorage(*written))
          return false;
      }
    return true;
  }

  /// A call whose result has storage of its own: not a view, not a write.
  static bool isFreshStorage(const ir::Node& node) {
    if (!node.isCall())
      return false;
    const ir::OpTraits* traits = ir::findOpTraits(node.op());
    return traits && !traits->returnsAlias && !traits->mutatesArgument;
  }

  bool sameArgument(const ir::Argument& g, const ir::Argument& s) {
    if (g.isValue() && constants_.count(g.valueRef().node))
      return s.kind() == ir::Argument::Kind::Sym && s.symValue().isConstant() &&
             s.symValue().constantValue() == constants_.lookup(g.valueRef().node);
    if (g.kind() != s.kind())
      return false;
    if (g.isValue()) {
      auto it = map_.find(g.valueRef().node);
      return it != map_.end() && it->second == s.valueRef().node &&
             g.valueRef().index == s.valueRef().index;
    }
    if (g.isContainer()) {
      if (g.elements().size() != s.elements().size())
        return false;
      for (size_t i = 0; i < g.elements().size(); ++i)
        if (!sameArgument(g.elements()[i], s.elements()[i]))
          return false;
      std::string a, b;
      llvm::raw_string_ostream ao(a), bo(b);
      for (const ir::Argument& key : g.dictKeys())
        key.print(ao);
      for (const ir::Argument& key : s.dictKeys())
        key.print(bo);
      return a == b && g.attributeNames() == s.attributeNames() &&
             g.typeModule() == s.typeModule() && g.typeQualname() == s.typeQualname();
    }
    std::string a, b;
    llvm::raw_string_ostream ao(a), bo(b);
    g.print(ao);
    s.print(bo);
    return a == b;
  }

  /// Whether a value the general graph computes may be laid out unlike the
  /// special graph's, or be a copy where the special graph has a view.
  bool usesAny(const ir::Node& node, const llvm::SmallPtrSetImpl<const ir::Node*>& set) {
    bool any = false;
    node.forEachUse([&](const ir::ValueRef& use) { any |= set.count(use.node) > 0; });
    return any;
  }

  /// None when \p g and \p s are the same step; records the match.
  std::optional<std::string> sameNode(const ir::Node& g, const ir::Node& s) {
    if (g.kind() != s.kind())
      return differs(g, s);
    bool relaidOut = usesAny(g, relaidOut_);
    if (g.isInput()) {
      if (g.source() != s.source() || layoutText(g.type()) != layoutText(s.type()))
        return differs(g, s);
      map_[&g] = &s;
      return std::nullopt;
    }
    if (g.isOutput()) {
      if (relaidOut && !g.sideEffects().empty())
        return differs(g, s);
      if (std::optional<std::string> why = returnsObservableView(g, s))
        return why;
      if (g.args().size() != s.args().size())
        return differs(g, s);
      for (size_t i = 0; i < g.args().size(); ++i)
        if (!sameArgument(g.args()[i], s.args()[i]))
          return differs(g, s);
      // Results must be laid out as eager lays them out.
      bool same = true;
      g.forEachUse([&](const ir::ValueRef& use) {
        if (relaidOut_.count(use.node)) {
          auto it = map_.find(use.node);
          same &=
              it != map_.end() && layoutText(use.node->type()) == layoutText(it->second->type());
        }
      });
      if (!same)
        return "its results are laid out otherwise" + locationOf(s);
      std::string a, b;
      llvm::raw_string_ostream ao(a), bo(b);
      for (const ir::SideEffect& effect : g.sideEffects())
        ao << int(effect.kind) << effect.target << effect.hookMethod << effect.hookFunction.source
           << effect.hookFunction.module << ':' << effect.hookFunction.qualname
           << effect.hookFunction.line << effect.hookFunction.imported << effect.method << ':'
           << effect.line << ';';
      for (const ir::SideEffect& effect : s.sideEffects())
        bo << int(effect.kind) << effect.target << effect.hookMethod << effect.hookFunction.source
           << effect.hookFunction.module << ':' << effect.hookFunction.qualname
           << effect.hookFunction.line << effect.hookFunction.imported << effect.method << ':'
           << effect.line << ';';
      return a == b ? std::nullopt : std::optional<std::string>(differs(g, s));
    }
    if (ir::isAutogradFunctionCall(g) && ir::isAutogradFunctionCall(s)) {
      if (std::optional<std::string> why = sameAutogradCall(g, s))
        return why;
      if (relaidOut || layoutText(g.type()) != layoutText(s.type()))
        return differs(g, s);
      map_[&g] = &s;
      return std::nullopt;
    }
    // A view after a copy is the special graph's view: torch spells the
    // view of a copy `_unsafe_view`.
    bool sameOp = g.op() == s.op() || (relaidOut && g.op() == "aten::_unsafe_view.default" &&
                                       s.op() == "aten::view.default");
    if (!sameOp || g.args().size() != s.args().size() || g.kwargs().size() != s.kwargs().size())
      return differs(g, s);
    if (relaidOut && llvm::StringRef(g.op()).contains("as_strided"))
      return differs(g, s);
    // A view's sizes are its result's, whether spelled with -1 or not.
    auto isView = [](llvm::StringRef op) {
      return op == "aten::view.default" || op == "aten::_unsafe_view.default";
    };
    bool viewSizes = isView(g.op()) && isView(s.op()) && g.args().size() == 2 &&
                     g.type().isTensor() && s.type().isTensor() &&
                     g.type().sizes() == s.type().sizes();
    for (size_t i = 0; i < g.args().size(); ++i)
      if (!(viewSizes && i == 1) && !sameArgument(g.args()[i], s.args()[i]))
        return differs(g, s);
    for (size_t i = 0; i < g.kwargs().size(); ++i)
      if (g.kwargs()[i].name != s.kwargs()[i].name ||
          !sameArgument(g.kwargs()[i].value, s.kwargs()[i].value))
        return differs(g, s);
    if (layoutText(g.type(), !relaidOut) != layoutText(s.type(), !relaidOut))
      return differs(g, s);
    map_[&g] = &s;
    if (relaidOut && layoutText(g.type()) != layoutText(s.type()))
      relaidOut_.insert(&g);
    const ir::OpTraits* traits = ir::findOpTraits(g.op());
    if (usesAny(g, copies_) && (!traits || traits->returnsAlias))
      copies_.insert(&g);
    return std::nullopt;
  }

  /// None when two autograd.Function nodes apply the same Function to the
  /// same values and their backward graphs are one program at these sizes:
  /// each capture makes a backward graph of its own (`Fn.backward`,
  /// `Fn.backward.1`), so their names differ, and the sizes the general
  /// node passes that are constants here are constants in the special
  /// backward graph.
  std::optional<std::string> sameAutogradCall(const ir::Node& g, const ir::Node& s) {
    llvm::Expected<ir::AutogradFunctionCall> gCall = ir::readAutogradFunctionCall(g);
    llvm::Expected<ir::AutogradFunctionCall> sCall = ir::readAutogradFunctionCall(s);
    if (!gCall || !sCall) {
      llvm::consumeError(gCall.takeError());
      llvm::consumeError(sCall.takeError());
      return differs(g, s);
    }
    // Positions 1 and 8: the backward graph's name, the sizes passed.
    constexpr size_t BackwardName = 1, PassedSizes = 8;
    if (g.args().size() != s.args().size() || !g.kwargs().empty() || !s.kwargs().empty())
      return differs(g, s);
    for (size_t i = 0; i < g.args().size(); ++i)
      if (i != BackwardName && i != PassedSizes && !sameArgument(g.args()[i], s.args()[i]))
        return differs(g, s);
    // A Function that marks an input dirty gives that very tensor a new
    // history: a copy the special graph does not make would get it instead.
    if (usesAny(g, copies_) && llvm::any_of(gCall->dirty, [](int64_t i) { return i >= 0; }))
      return differs(g, s);
    std::vector<ir::Argument> passed;
    for (const ir::SymExpr& size : gCall->sizes)
      if (!size.isConstant())
        passed.push_back(ir::Argument::sym(size));
    if (!sameArgument(ir::Argument::list(std::move(passed)), s.args()[PassedSizes]))
      return differs(g, s);
    const ir::Graph* gBackward =
        generalModule_ ? generalModule_->findBackward(gCall->backward) : nullptr;
    const ir::Graph* sBackward =
        special_.module() ? special_.module()->findBackward(sCall->backward) : nullptr;
    if (!gBackward || !sBackward)
      return differs(g, s);
    if (std::optional<std::string> why = differenceAt(*gBackward, *sBackward, sizes_))
      return "its backward graph for " + gCall->function + " differs: " + *why;
    return std::nullopt;
  }

  /// The node whose storage \p node's result shares in the special graph:
  /// through views, the tensor they view.
  const ir::Node* storageOf(const ir::Node* node) {
    while (node->isCall() && !node->args().empty() && node->args().front().isValue()) {
      const ir::OpTraits* traits = ir::findOpTraits(node->op());
      if (traits && !traits->returnsAlias)
        break;
      node = node->args().front().valueRef().node;
    }
    return node;
  }

  /// Where the general graph returns a copy (or a view of one) and the
  /// special graph a view, a caller can tell the two apart if that view
  /// shares storage with an input or with another result.
  std::optional<std::string> returnsObservableView(const ir::Node& g, const ir::Node& s) {
    llvm::DenseMap<const ir::Node*, int> results;
    s.forEachUse([&](const ir::ValueRef& use) { ++results[storageOf(use.node)]; });
    std::optional<std::string> why;
    g.forEachUse([&](const ir::ValueRef& use) {
      if (why || !copies_.count(use.node))
        return;
      auto it = map_.find(use.node);
      const ir::Node* storage = it == map_.end() ? nullptr : storageOf(it->second);
      if (!storage || storage->isInput() || results[storage] > 1)
        why = "it returns a view of " +
              (storage && storage->isInput() ? "an input" : std::string("another result")) +
              " where the general graph returns a copy" + locationOf(s);
    });
    return why;
  }

  const ir::Graph& general_;
  const ir::Graph& special_;
  const ir::Module* generalModule_;
  const SizePoint& sizes_;
  llvm::DenseMap<const ir::Node*, const ir::Node*> map_;
  /// Int inputs of the general graph set to sizes.
  llvm::DenseMap<const ir::Node*, int64_t> constants_;
  /// Copies the special graph does not make, and views of them.
  llvm::SmallPtrSet<const ir::Node*, 8> copies_;
  /// Values whose layout may differ from the special graph's.
  llvm::SmallPtrSet<const ir::Node*, 8> relaidOut_;
  /// The `copy_` of each fill the special graph leaves out (elidableFill).
  llvm::SmallPtrSet<const ir::Node*, 8> fills_;
};

/// The first place \p special differs from \p general (the general graph
/// with the special one's sizes set), for the note.
std::string firstDifference(const ir::Graph& general, const ir::Graph& special, bool nodes = true) {
  auto a = general.nodes().begin(), aEnd = general.nodes().end();
  auto b = special.nodes().begin(), bEnd = special.nodes().end();
  if (!nodes)
    a = aEnd, b = bEnd;
  for (; a != aEnd && b != bEnd; ++a, ++b) {
    std::string left = lineOf(*a), right = lineOf(*b);
    if (left == right && a->location() == b->location())
      continue;
    const ir::Location& where = b->location().empty() ? a->location() : b->location();
    std::string at = where.empty() ? "" : " at " + where.describe();
    if (left == right)
      return "`" + right + "` comes from another line" + at;
    return "it computes `" + right + "` where the general graph computes `" + left + "`" + at;
  }
  if (nodes && a != aEnd)
    return "the general graph goes on with `" + lineOf(*a) + "`" +
           (a->location().empty() ? "" : " at " + a->location().describe());
  if (nodes && b != bEnd)
    return "it goes on with `" + lineOf(*b) + "`" +
           (b->location().empty() ? "" : " at " + b->location().describe());
  auto linesOf = [](const ir::Graph& graph) {
    std::vector<std::string> lines;
    for (const ir::Relation& relation : graph.relations()) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << "relation ";
      relation.print(os);
      lines.push_back(text);
    }
    for (const ir::Guard& guard : graph.guards().guards()) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << "guard ";
      guard.print(os);
      lines.push_back(text);
    }
    // Guards are a set: capture records them in the order the program
    // reads, which a constant in place of a symbol may change.
    llvm::sort(lines);
    return lines;
  };
  std::vector<std::string> left = linesOf(general), right = linesOf(special);
  for (size_t i = 0; i < std::max(left.size(), right.size()); ++i) {
    if (i < left.size() && i < right.size() && left[i] == right[i])
      continue;
    if (i >= right.size())
      return "the general graph has the " + left[i] + " besides";
    if (i >= left.size())
      return "it has the " + right[i] + " besides";
    return "it has the " + right[i] + " where the general graph has the " + left[i];
  }
  if (!nodes) {
    std::vector<std::string> a, b;
    for (const ir::SymbolDecl& decl : general.symbols())
      a.push_back(decl.name);
    for (const ir::SymbolDecl& decl : special.symbols())
      b.push_back(decl.name);
    return a == b ? "" : "their symbols differ";
  }
  return "their symbols differ";
}

/// Whether \p special, captured at \p sizes, is \p general there; else why
/// not.
std::optional<std::string> differenceAt(const ir::Graph& general, const ir::Graph& special,
                                        const SizePoint& sizes) {
  // The other symbols must cover the same ranges, or the widened graph
  // would claim points the special one was never compared at.
  for (const ir::SymbolDecl& decl : special.symbols()) {
    const ir::SymbolDecl* mine = general.findSymbol(decl.name);
    if (!mine || !(mine->range == decl.range))
      return "the two graphs declare " + decl.name + " over different ranges";
  }
  llvm::Expected<std::unique_ptr<GraphAtSizes>> at = graphAtSizes(general, sizes);
  if (!at)
    return "the general graph does not serve it: " + llvm::toString(at.takeError());
  const ir::Graph& general_at = *(*at)->graph;
  if (rangeFreeText(general_at) == rangeFreeText(special))
    return std::nullopt;
  // The same program with other layouts (ProgramMatch), under the same
  // guards and relations.
  if (std::optional<std::string> why =
          ProgramMatch(general_at, special, general.module(), sizes).run())
    return why;
  std::string rest = firstDifference(general_at, special, /*nodes=*/false);
  return rest.empty() ? std::nullopt : std::optional<std::string>(rest);
}

} // namespace

llvm::Expected<std::string> rangeFreeTextAt(const ir::Graph& graph, const SizePoint& sizes) {
  llvm::Expected<std::unique_ptr<GraphAtSizes>> at = graphAtSizes(graph, sizes);
  if (!at)
    return at.takeError();
  return rangeFreeText(*(*at)->graph);
}

FoldPlan planSizeFolds(llvm::ArrayRef<CapturedAt> family) {
  // The sizes each graph holds as constants: a size it was captured at
  // that is still a symbol (the first size past a cut) starts a range.
  std::vector<SizePoint> pinned;
  for (const CapturedAt& captured : family) {
    SizePoint constants;
    for (const auto& [symbol, size] : captured.point)
      if (!captured.graph->findSymbol(symbol))
        constants[symbol] = size;
    pinned.push_back(std::move(constants));
  }
  FoldPlan plan;
  std::vector<bool> absorbed(family.size(), false);
  for (size_t a = 0; a < family.size(); ++a) {
    if (absorbed[a])
      continue;
    const CapturedAt& general = family[a];
    auto capturedAt = [&](const SizePoint& point) -> std::optional<size_t> {
      for (size_t b = 0; b < family.size(); ++b)
        if (b != a && !absorbed[b] && pinned[b] == point)
          return b;
      return std::nullopt;
    };
    // The symbols whose size just below the range was captured apart.
    std::vector<std::pair<std::string, int64_t>> candidates;
    for (const ir::SymbolDecl& decl : general.graph->symbols()) {
      if (decl.unbacked || !decl.range.lo)
        continue;
      SizePoint point = pinned[a];
      point[decl.name] = *decl.range.lo - 1;
      if (capturedAt(point))
        candidates.emplace_back(decl.name, *decl.range.lo - 1);
    }
    if (candidates.empty())
      continue;
    // Each part U of the candidates, as a bit mask: the graph captured with
    // U set, and whether it is the general graph there.
    struct Check {
      std::optional<size_t> special;
      std::optional<std::string> why; // none: the same program
    };
    std::map<unsigned, Check> checks;
    auto check = [&](unsigned mask) -> const Check& {
      if (auto it = checks.find(mask); it != checks.end())
        return it->second;
      SizePoint point = pinned[a], sizes;
      for (size_t i = 0; i < candidates.size(); ++i)
        if (mask & (1u << i)) {
          point[candidates[i].first] = candidates[i].second;
          sizes[candidates[i].first] = candidates[i].second;
        }
      Check result;
      result.special = capturedAt(point);
      if (!result.special)
        result.why = "no graph was captured at " + describePoint(sizes);
      else
        result.why = differenceAt(*general.graph, *family[*result.special].graph, sizes);
      return checks[mask] = result;
    };
    unsigned full = (1u << candidates.size()) - 1, best = 0;
    // The largest set W whose every part checks out (ties: the earlier
    // symbols first, by mask order).
    for (unsigned w = full; w > 0; --w) {
      if (__builtin_popcount(w) <= __builtin_popcount(best))
        continue;
      bool ok = true;
      for (unsigned u = w; u > 0 && ok; u = (u - 1) & w)
        ok = !check(u).why;
      if (ok)
        best = w;
    }
    if (best) {
      SizeFold fold{a, {}, {}};
      for (size_t i = 0; i < candidates.size(); ++i)
        if (best & (1u << i))
          fold.widened.push_back(candidates[i].first);
      for (unsigned u = best; u > 0; u = (u - 1) & best) {
        fold.absorbed.push_back(*check(u).special);
        absorbed[*check(u).special] = true;
      }
      plan.folds.push_back(std::move(fold));
    }
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (best & (1u << i))
        continue;
      const Check& alone = check(1u << i);
      std::string why = alone.why ? *alone.why : "";
      // Alone it is the same program, but not together with the others.
      for (unsigned u = full; why.empty() && u > 0; --u)
        if ((u & (1u << i)) && check(u).why)
          why = "with " + describePoint([&] {
                  SizePoint p;
                  for (size_t j = 0; j < candidates.size(); ++j)
                    if (u & (1u << j))
                      p[candidates[j].first] = candidates[j].second;
                  return p;
                }()) +
                ", " + *check(u).why;
      plan.kept.push_back(
          {a, *alone.special, candidates[i].first, candidates[i].second, std::move(why)});
    }
  }
  // A size one graph does not serve may be folded into another (a graph
  // captured where a disjunction fails serves the sizes the first leaves
  // out): it is not kept apart.
  llvm::erase_if(plan.kept, [&](const KeptApart& kept) { return absorbed[kept.special]; });
  return plan;
}

} // namespace dync::compiler
