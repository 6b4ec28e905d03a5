//===- Verifier.cpp - Structural rules every graph obeys ------------------===//
#include "ir/Verifier.h"

#include "ir/AutogradFunction.h"
#include "ir/BigIntGuard.h"
#include "ir/ControlFlow.h"
#include "ir/ScalarOps.h"
#include "ir/Source.h"
#include "ir/Syntax.h"
#include "ir/WhileLoop.h"
#include "ir/kernel/ElementOps.h"
#include "ir/kernel/KernelViews.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"

#include <functional>
#include <limits>

namespace dync::ir {

namespace {

/// Whether \p key is what a dict's key may be in the IR: a literal the
/// rewritten code loads as a constant, or a plain tuple of such keys.
bool isDictKeyLiteral(const Argument& key) {
  using Kind = Argument::Kind;
  if (key.kind() == Kind::Tuple && !key.hasTupleType())
    return llvm::all_of(key.elements(), isDictKeyLiteral);
  return key.kind() == Kind::String || key.kind() == Kind::Bool || key.kind() == Kind::None ||
         key.kind() == Kind::Float || (key.kind() == Kind::Sym && key.symValue().isConstant());
}

/// Collects diagnostics as text, located when a SourceMgr and a location are
/// known.
class DiagnosticSink {
public:
  explicit DiagnosticSink(const llvm::SourceMgr* sm) : sm_(sm) {}

  void report(const Graph& graph, llvm::SMLoc loc, const llvm::Twine& message) {
    llvm::raw_string_ostream os(text_);
    if (sm_ && loc.isValid())
      sm_->PrintMessage(os, loc, llvm::SourceMgr::DK_Error, message, {}, {}, false);
    else
      os << "error: graph @" << graph.name() << ": " << message << '\n';
  }

  llvm::Error takeError() {
    if (text_.empty())
      return llvm::Error::success();
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   llvm::StringRef(text_).rtrim('\n'));
  }

private:
  const llvm::SourceMgr* sm_;
  std::string text_;
};

class GraphVerifier {
public:
  GraphVerifier(const Graph& graph, DiagnosticSink& sink) : graph_(graph), sink_(sink) {}

  void run() {
    checkSymbols();
    checkRelations();
    checkOrder();
    for (const Node& node : graph_.nodes())
      checkNode(node);
    checkUnbackedBindings();
    if (graph_.isKernel())
      checkKernelResult();
    if (graph_.isSubgraph())
      if (const Node* output = graph_.output())
        checkSubgraphResult(graph_, [&](const llvm::Twine& message) { report(*output, message); });
    checkGuards();
  }

private:
  void report(llvm::SMLoc loc, const llvm::Twine& message) { sink_.report(graph_, loc, message); }
  /// A problem with \p node, naming the user's line it came from when known.
  void report(const Node& node, const llvm::Twine& message) {
    sink_.report(graph_, node.loc(), message + node.location().suffix());
  }

  static std::string label(const Node& node) {
    return node.isOutput() ? std::string("return") : "%" + node.name();
  }

  void checkSymbols() {
    for (const SymbolDecl& decl : graph_.symbols()) {
      if (!isIdentifier(decl.name))
        report(decl.loc, "symbol name '" + decl.name + "' is not an identifier");
      else if (isReservedWord(decl.name))
        report(decl.loc,
               "symbol name '" + decl.name +
                   "' is reserved (a dtype, device, layout, memory format, literal or operator)");
      if (!declared_.insert(decl.name).second)
        report(decl.loc, "symbol '" + decl.name + "' is declared more than once");
      if (decl.range.lo && decl.range.hi && *decl.range.lo > *decl.range.hi)
        report(decl.loc, "symbol '" + decl.name + "' has an empty range [" +
                             llvm::Twine(*decl.range.lo) + ", " + llvm::Twine(*decl.range.hi) +
                             "]");
    }
  }

  /// Reports each undeclared symbol of \p e once per \p what.
  /// \p suffix ends each message (a node's location).
  void checkSymbolsDeclared(SymExpr e, llvm::SMLoc loc, llvm::StringRef what,
                            llvm::StringSet<>& reported, llvm::StringRef suffix = "") {
    e.walkSymbols([&](SymExpr symbol) {
      llvm::StringRef name = symbol.symbolName();
      if (!declared_.contains(name) && reported.insert(name).second)
        report(loc, what + ": symbol '" + name + "' is not declared" + suffix);
    });
  }

  void checkRelations() {
    for (const Relation& relation : graph_.relations()) {
      std::vector<Comparison> comparisons = relation.comparisons();
      if (llvm::any_of(comparisons, [](const Comparison& c) { return !c.lhs || !c.rhs; })) {
        report(relation.loc, "relation is missing a side");
        continue;
      }
      std::string text;
      llvm::raw_string_ostream os(text);
      os << "relation '";
      relation.print(os);
      os << "'";
      llvm::StringSet<> reported;
      for (const Comparison& comparison : comparisons) {
        checkSymbolsDeclared(comparison.lhs, relation.loc, text, reported);
        checkSymbolsDeclared(comparison.rhs, relation.loc, text, reported);
      }
    }
  }

  /// A data-dependent symbol has no value until a node computes it: its
  /// first mention must be a whole dimension or the `int<u0>` of a call's
  /// result, which the graph function reads it from. Inputs and guards never
  /// mention one.
  void checkUnbackedBindings() {
    if (graph_.isKernel() ||
        llvm::none_of(graph_.symbols(), [](const SymbolDecl& decl) { return decl.unbacked; }))
      return;
    llvm::StringSet<> unbound;
    for (const SymbolDecl& decl : graph_.symbols())
      if (decl.unbacked)
        unbound.insert(decl.name);
    auto requireBound = [&](const Node& node, SymExpr e, llvm::StringRef what) {
      if (!e)
        return;
      e.walkSymbols([&](SymExpr symbol) {
        if (unbound.contains(symbol.symbolName()))
          report(node, "the unbacked symbol " + symbol.symbolName() + " is used in " + what +
                           " of " + label(node) +
                           " before a node's result computes it (as a whole dimension or an "
                           "int<" +
                           symbol.symbolName() + "> result)");
      });
    };
    std::function<void(const Type&)> bind = [&](const Type& type) {
      if (type.isTensor()) {
        for (SymExpr size : type.sizes())
          if (size && size.isSymbol())
            unbound.erase(size.symbolName());
      } else if (type.kind() == Type::Kind::Int) {
        if (type.intValue() && type.intValue().isSymbol())
          unbound.erase(type.intValue().symbolName());
      } else if (type.isSequence()) {
        for (const Type& element : type.elements())
          bind(element);
      }
    };
    for (const Node& node : graph_.nodes()) {
      for (const Argument& arg : node.args())
        arg.forEachSym([&](SymExpr e) { requireBound(node, e, "an argument"); });
      for (const KeywordArgument& kwarg : node.kwargs())
        kwarg.value.forEachSym([&](SymExpr e) { requireBound(node, e, "an argument"); });
      if (node.isInput()) {
        node.type().walkSymExprs([&](SymExpr e) { requireBound(node, e, "the type"); });
        continue;
      }
      if (node.isCall())
        bind(node.type());
      node.type().walkSymExprs([&](SymExpr e) { requireBound(node, e, "the type"); });
    }
  }

  /// Inputs first, one return last, names unique; records node positions
  /// for the def-before-use check.
  void checkOrder() {
    bool seenOperation = false;
    llvm::StringMap<const Node*> names;
    size_t position = 0;
    for (const Node& node : graph_.nodes()) {
      position_[&node] = position++;
      if (node.isInput() && seenOperation)
        report(node, "input " + label(node) + " comes after an operation; inputs come first");
      if (!node.isInput())
        seenOperation = true;
      if (node.isOutput()) {
        if (&node != &graph_.nodes().back())
          report(node, "'return' must be the last node of the graph");
        continue;
      }
      if (!isValueName(node.name())) {
        report(node, "'%" + node.name() + "' is not a valid value name");
        continue;
      }
      if (!names.try_emplace(node.name(), &node).second)
        report(node, "value " + label(node) + " is defined more than once");
    }
    // A misplaced 'return' was reported above; this is for a missing one.
    if (llvm::none_of(graph_.nodes(), [](const Node& n) { return n.isOutput(); }))
      report(graph_.loc(), "graph @" + graph_.name() + " has no 'return'");
  }

  void checkNode(const Node& node) {
    switch (node.kind()) {
    case NodeKind::Input:
      if (graph_.isBackward()) {
        // The autograd node passes a backward graph's inputs.
        if (!node.source().empty())
          report(node, "backward graph input " + label(node) +
                           " has a source; backward graph inputs have none");
        // Tensors, then the sizes none of them carries (`int<b>`).
        if (!node.type().isTensor() &&
            !(node.type().kind() == Type::Kind::Int && node.type().intValue() &&
              node.type().intValue().isSymbol()))
          report(node, "backward graph input " + label(node) +
                           " must be a tensor or an int of one symbol, not " + node.type().str());
      } else if (graph_.isKernel()) {
        // The caller passes a kernel's inputs as buffers.
        if (!node.source().empty())
          report(node, "kernel input " + label(node) + " has a source; kernel inputs have none");
        if (!node.type().isTensor() || node.type().isSparse())
          report(node, "kernel input " + label(node) + " must be a strided tensor, not " +
                           node.type().str());
      } else if (graph_.isSubgraph()) {
        // The cond or while_loop node passes a subgraph's inputs.
        if (!node.source().empty())
          report(node,
                 "subgraph input " + label(node) + " has a source; subgraph inputs have none");
        if (!node.type().isTensor())
          report(node,
                 "subgraph input " + label(node) + " must be a tensor, not " + node.type().str());
      } else if (!isWellFormedSource(node.source()))
        report(node, "input " + label(node) + " has a malformed source '" + node.source() +
                         "' (it must be one line with balanced brackets and quotes)");
      else if (llvm::Expected<SourcePtr> source = Source::parse(node.source()); !source)
        report(node, "input " + label(node) + ": " + llvm::toString(source.takeError()));
      break;
    case NodeKind::Call:
      if (node.isKernelCall())
        checkKernelCall(node);
      else if (isCondCall(node) && graph_.isKernel())
        report(node, label(node) + ": a kernel cannot hold a cond");
      else if (isCondCall(node))
        checkCondCall(graph_, node, [&](const llvm::Twine& message) {
          report(node, label(node) + ": " + message);
        });
      else if (isWhileLoopCall(node) && graph_.isKernel())
        report(node, label(node) + ": a kernel cannot hold a while_loop");
      else if (isWhileLoopCall(node))
        checkWhileLoopCall(graph_, node, [&](const llvm::Twine& message) {
          report(node, label(node) + ": " + message);
        });
      else if (isAutogradFunctionCall(node)) {
        if (graph_.isKernel())
          report(node, label(node) + ": a kernel cannot apply an autograd.Function");
        else if (std::string why = checkAutogradFunctionCall(node, graph_.module()); !why.empty())
          report(node, label(node) + ": " + why);
      } else if (std::string why = checkScalarOp(node); !why.empty())
        report(node, label(node) + ": " + why);
      else if (!isOperatorName(node.op()))
        report(node, label(node) + ": operator '" + node.op() +
                         "' is not of the form namespace::name.overload");
      else if (graph_.isKernel())
        checkKernelOp(node);
      break;
    case NodeKind::Output:
      // The function's one return value; a returned tuple is one argument.
      if (node.args().size() != 1 + node.sideEffects().size())
        report(node, "'return' must hold exactly one value, not " +
                         llvm::Twine(node.args().size() - node.sideEffects().size()));
      for (auto [i, effect] : llvm::enumerate(node.sideEffects())) {
        if (effect.kind == SideEffect::Kind::Hook) {
          checkHookEffect(node, effect, node.args()[i + 1]);
          continue;
        }
        if (effect.kind == SideEffect::Kind::Call)
          checkCallEffect(node, effect, node.args()[i + 1]);
        llvm::Expected<SourcePtr> target = Source::parse(effect.target);
        if (!target)
          report(node,
                 "side effect on '" + effect.target + "': " + llvm::toString(target.takeError()));
        else if (effect.kind == SideEffect::Kind::Set && (*target)->kind() != Source::Kind::Attr &&
                 (*target)->kind() != Source::Kind::Global)
          report(node, "'after set' assigns an attribute or a global, not " + effect.target);
        else if (effect.kind == SideEffect::Kind::Extend &&
                 node.args()[i + 1].kind() != Argument::Kind::List)
          report(node, "'after extend' extends " + effect.target + " by a list");
        else if (effect.kind == SideEffect::Kind::Update &&
                 node.args()[i + 1].kind() != Argument::Kind::Dict)
          report(node, "'after update' updates " + effect.target + " from a dict");
      }
      if (!node.kwargs().empty())
        report(node, "'return' takes no keyword arguments");
      break;
    }
    checkType(node, node.type());

    llvm::StringSet<> reportedSymbols;
    std::string nodeSuffix = node.location().suffix();
    auto checkArgument = [&](const Argument& arg) {
      checkTupleTypes(node, arg);
      arg.forEachSym([&](SymExpr e) {
        checkSymbolsDeclared(e, node.loc(), label(node), reportedSymbols, nodeSuffix);
      });
      arg.forEachValue([&](const ValueRef& use) { checkUse(node, use); });
    };
    for (const Argument& arg : node.args())
      checkArgument(arg);
    llvm::StringSet<> kwargNames;
    for (const KeywordArgument& kwarg : node.kwargs()) {
      if (!isIdentifier(kwarg.name))
        report(node,
               label(node) + ": keyword argument name '" + kwarg.name + "' is not an identifier");
      if (!kwargNames.insert(kwarg.name).second)
        report(node, label(node) + ": keyword argument '" + kwarg.name + "' is given twice");
      checkArgument(kwarg.value);
    }
  }

  /// A tuple's Python type (`torch.return_types:max(...)`) says how the
  /// returned value is rebuilt, so it belongs to the return value only:
  /// operators take plain tuples. Both parts of the name are needed to
  /// import the type.
  /// A hook registration after the graph: its value is `(tensor,
  /// defaults..., cell values...)`, the tensor one of the graph's, and its
  /// sources parse.
  void checkHookEffect(const Node& node, const SideEffect& effect, const Argument& value) {
    const SideEffect::Function& function = effect.hookFunction;
    if (effect.hookMethod != "register_hook" &&
        effect.hookMethod != "register_post_accumulate_grad_hook")
      report(node, "'after " + effect.hookMethod + "' is not a hook registration");
    size_t valued = 1 + function.defaults;
    for (const auto& [name, source] : function.cells)
      if (source.empty())
        ++valued;
    if (value.kind() != Argument::Kind::Tuple || value.elements().size() != valued ||
        !value.elements()[0].isValue()) {
      report(node, "'after " + effect.hookMethod +
                       "' holds a tensor, then one value per default and cell without a source");
      return;
    }
    std::vector<std::string> sources;
    if (!function.source.empty())
      sources.push_back(function.source);
    else if (function.module.empty() || function.qualname.empty())
      report(node, "'after " + effect.hookMethod + "' names no function");
    for (const auto& [name, source] : function.cells)
      if (!source.empty())
        sources.push_back(source);
    for (const std::string& source : sources)
      if (llvm::Expected<SourcePtr> parsed = Source::parse(source); !parsed)
        report(node,
               "hook function source '" + source + "': " + llvm::toString(parsed.takeError()));
  }

  /// A call after the graph: its value is `(args, kwargs)`, a plain tuple
  /// and a plain dict whose keys are strs (the keyword names).
  void checkCallEffect(const Node& node, const SideEffect& effect, const Argument& value) {
    std::string what = "'after call " + effect.target + "'";
    if (value.kind() != Argument::Kind::Tuple || value.elements().size() != 2 ||
        value.elements()[0].kind() != Argument::Kind::Tuple || value.elements()[0].hasTupleType() ||
        value.elements()[1].kind() != Argument::Kind::Dict || value.elements()[1].hasTypeName()) {
      report(node, what + " holds its positional arguments as a tuple, then its keyword "
                          "arguments as a dict");
      return;
    }
    for (const Argument& key : value.elements()[1].dictKeys())
      if (key.kind() != Argument::Kind::String)
        report(node, what + ": a keyword argument is named by a str");
    if (effect.line < 0)
      report(node, what + ": a line is not negative");
  }

  void checkTupleTypes(const Node& node, const Argument& arg) {
    // An object imported by name is rebuilt by the rewritten code; no
    // operator takes one.
    if (arg.kind() == Argument::Kind::Named && node.kind() != NodeKind::Output)
      report(node, label(node) + ": the object " + arg.typeModule() +
                       (arg.typeQualname().empty() ? "" : ":" + arg.typeQualname()) +
                       " can only be returned or passed to a call after the graph");
    if (!arg.isContainer())
      return;
    if (arg.kind() == Argument::Kind::Dict || arg.kind() == Argument::Kind::Object) {
      checkDictOrObject(node, arg);
      return;
    }
    if (arg.hasTupleType() && node.kind() != NodeKind::Output)
      report(node, label(node) + ": a tuple of type " + arg.tupleTypeModule() + ":" +
                       arg.tupleTypeQualname() +
                       " can only be returned; operators take plain tuples");
    if (arg.hasTupleType() && arg.tupleTypeQualname().empty())
      report(node, label(node) + ": the tuple type '" + arg.tupleTypeModule() +
                       ":' has no qualified name");
    for (const Argument& element : arg.elements())
      checkTupleTypes(node, element);
  }

  /// Dicts and objects are what a function returns, rebuilt by the
  /// rewritten code: only the return value holds them. Dict keys are
  /// literals Python can hash; object attributes are named once each.
  void checkDictOrObject(const Node& node, const Argument& arg) {
    bool isObject = arg.kind() == Argument::Kind::Object;
    const char* what = isObject ? "an object" : "a dict";
    if (node.kind() != NodeKind::Output)
      report(node.loc(), label(node) + ": " + what + " can only be returned");
    if (arg.hasTypeName() && arg.typeQualname().empty())
      report(node.loc(),
             label(node) + ": the type '" + arg.typeModule() + ":' has no qualified name");
    if (isObject) {
      if (!arg.hasTypeName())
        report(node.loc(), label(node) + ": an object needs its type");
      llvm::StringSet<> seen;
      for (const std::string& name : arg.attributeNames())
        if (!seen.insert(name).second)
          report(node.loc(), label(node) + ": attribute '" + name + "' is set twice");
    }
    {
      for (const Argument& key : arg.dictKeys())
        if (!isDictKeyLiteral(key))
          report(node.loc(), label(node) + ": a dict key must be a string, int, bool, float "
                                           "or none literal, or a tuple of them");
    }
    for (const Argument& element : arg.elements())
      checkTupleTypes(node, element);
  }

  /// `%n = @k(...)`: the kernel exists, is not called from a kernel, and the
  /// call matches its signature; the caller declares the kernel's symbols
  /// with ranges the kernel accepts, since it binds them.
  void checkKernelCall(const Node& node) {
    std::string what = label(node) + ": call of kernel @" + node.kernelName().str();
    if (graph_.isKernel() || graph_.isSubgraph()) {
      report(node,
             what + (graph_.isKernel() ? ": a kernel" : ": a subgraph") + " cannot call kernels");
      return;
    }
    const Graph* kernel =
        graph_.module() ? graph_.module()->findKernel(node.kernelName()) : nullptr;
    if (!kernel) {
      report(node, label(node) + ": no kernel @" + node.kernelName() + " in the module");
      return;
    }
    checkBufferPlan(node, what);
    std::vector<const Node*> inputs;
    for (const Node& input : kernel->inputs())
      inputs.push_back(&input);
    if (node.args().size() != inputs.size())
      report(node, what + " has " + llvm::Twine(node.args().size()) + " arguments, but @" +
                       kernel->name() + " takes " + llvm::Twine(inputs.size()));
    for (auto [i, arg, input] : llvm::enumerate(node.args(), inputs)) {
      const Type* type = nullptr;
      if (arg.isValue() && arg.valueRef().node)
        type = arg.valueRef().node->resultType(arg.valueRef().index);
      if (!arg.isValue())
        report(node, what + ": argument " + llvm::Twine(i) + " is not a value");
      else if (type && *type != input->type())
        report(node, what + ": argument " + llvm::Twine(i) + " has type " + type->str() +
                         ", but input %" + input->name() + " has type " + input->type().str());
    }
    std::optional<Type> result = kernelResultType(*kernel);
    if (result && node.type() != *result)
      report(node, what + " has type " + node.type().str() + ", but @" + kernel->name() +
                       " returns " + result->str());
    for (const SymbolDecl& decl : kernel->symbols()) {
      const SymbolDecl* own = graph_.findSymbol(decl.name);
      if (!own) {
        report(node,
               what + ": the kernel's symbol '" + decl.name + "' is not declared in this graph");
        continue;
      }
      auto within = [](std::optional<int64_t> bound, std::optional<int64_t> limit, bool lower) {
        return !limit || (bound && (lower ? *limit <= *bound : *bound <= *limit));
      };
      if (!within(own->range.lo, decl.range.lo, true) ||
          !within(own->range.hi, decl.range.hi, false)) {
        std::string ranges;
        llvm::raw_string_ostream os(ranges);
        own->range.print(os);
        os << ", but the kernel accepts ";
        decl.range.print(os);
        report(node, what + ": symbol '" + decl.name + "' ranges over " + ranges);
      }
    }
  }

  /// A kernel call's only keyword argument is memory planning's
  /// `buffers=[...]` (passes/MemoryPlan.h): one entry per output,
  /// a slot number or `none`. Whether the slots' lifetimes are disjoint is
  /// checkMemoryPlan's question, which codegen asks.
  void checkBufferPlan(const Node& node, const std::string& what) {
    for (const KeywordArgument& kw : node.kwargs()) {
      if (kw.name != "buffers") {
        report(node, what +
                         " has keyword arguments; kernels take positional ones only "
                         "(and memory planning's 'buffers'), not '" +
                         kw.name + "'");
        continue;
      }
      size_t outputs = node.type().isSequence() ? node.type().elements().size() : 1;
      bool ok = kw.value.kind() == Argument::Kind::List && kw.value.elements().size() == outputs;
      if (ok)
        for (const Argument& slot : kw.value.elements())
          ok &= slot.kind() == Argument::Kind::None ||
                (slot.kind() == Argument::Kind::Sym && slot.symValue().isConstant() &&
                 slot.symValue().constantValue() >= 0 &&
                 slot.symValue().constantValue() <= std::numeric_limits<int32_t>::max());
      if (!ok)
        report(node, what + ": 'buffers' must be a list of " + llvm::Twine(outputs) +
                         " entries, each a buffer number or none");
    }
  }

  /// A kernel's body holds only what kernel codegen lowers, the one answer
  /// fusion and codegen share (ir/kernel/KernelOps.h).
  void checkKernelOp(const Node& node) {
    // A view is read through, so it must view the kernel's memory: an input,
    // or another view of one.
    if (viewOffset(node, graph_.context())) {
      const Node* operand = node.args()[0].valueRef().node;
      if (operand && !operand->isInput() && !viewOffset(*operand, graph_.context()))
        report(node, "kernel @" + graph_.name() + ": the view " + label(node) +
                         " must view a kernel input or a view of one, not %" + operand->name());
      return;
    }
    llvm::Expected<ElementDescription> desc = describeElement(node);
    if (!desc)
      report(node,
             "kernel @" + graph_.name() + " cannot compute " + llvm::toString(desc.takeError()));
  }

  /// A kernel returns one tensor value or a tuple of them: its outputs.
  void checkKernelResult() {
    const Node* output = graph_.output();
    if (!output || output->args().size() != 1)
      return;
    if (!kernelResultType(graph_)) {
      report(*output, "kernel @" + graph_.name() +
                          " must return a tensor value or a tuple of tensor values");
      return;
    }
    // Outputs are fresh buffers the kernel writes; a view writes nothing.
    output->forEachUse([&](const ValueRef& ref) {
      if (ref.node && (ref.node->isInput() || viewOffset(*ref.node, graph_.context())))
        report(*output, "kernel @" + graph_.name() + " returns %" + ref.node->name() +
                            ", which it does not compute; a kernel returns values "
                            "its nodes compute");
    });
  }

  void checkUse(const Node& user, const ValueRef& use) {
    if (!use.node) {
      report(user, label(user) + ": uses a null value");
      return;
    }
    auto def = position_.find(use.node);
    if (def == position_.end()) {
      report(user,
             label(user) + ": uses %" + use.node->name() + ", which is not a node of this graph");
      return;
    }
    if (use.node->isOutput()) {
      report(user, label(user) + ": uses the graph's 'return', which has no value");
      return;
    }
    if (def->second >= position_.lookup(&user))
      report(user, label(user) + ": uses %" + use.node->name() + " before its definition");
    if (use.index && !use.node->resultType(use.index)) {
      const Type& type = use.node->type();
      if (type.isSequence())
        report(user, label(user) + ": %" + use.node->name() + "#" + llvm::Twine(*use.index) +
                         " is out of range; %" + use.node->name() + " has " +
                         llvm::Twine(type.elements().size()) + " elements");
      else
        report(user, label(user) + ": %" + use.node->name() + "#" + llvm::Twine(*use.index) +
                         " indexes a value of type " + type.str() +
                         ", which is not a tuple or list");
    }
  }

  /// What is wrong with a sparse COO tensor type, or "": its sparse
  /// dimensions lie within its rank, it has no strides, and its nnz is an
  /// expression that is not a negative constant.
  static std::string sparseTypeProblem(const Type& type) {
    int64_t rank = static_cast<int64_t>(type.sizes().size());
    if (type.sparseDim() < 0 || type.sparseDim() > rank)
      return "sparse tensor type has " + std::to_string(type.sparseDim()) +
             " sparse dimensions but rank " + std::to_string(rank);
    if (!type.strides().empty())
      return "sparse tensor type has strides";
    if (!type.nnz())
      return "sparse tensor type has no nnz";
    if (type.nnz().isConstant() && type.nnz().constantValue() < 0)
      return "sparse tensor type has a negative nnz";
    return "";
  }

  void checkType(const Node& node, const Type& type) {
    llvm::StringSet<> reported;
    checkTypeRecursive(node, type, reported);
  }

  void checkTypeRecursive(const Node& node, const Type& type, llvm::StringSet<>& reported) {
    if (type.isSparse()) {
      if (std::string problem = sparseTypeProblem(type); !problem.empty())
        report(node, label(node) + ": " + problem);
    } else if (type.isTensor()) {
      if (type.sizes().size() != type.strides().size())
        report(node, label(node) + ": tensor type has " + llvm::Twine(type.sizes().size()) +
                         " sizes but " + llvm::Twine(type.strides().size()) + " strides");
    }
    if (type.isTensor()) {
      auto checkExtents = [&](llvm::ArrayRef<SymExpr> exprs, llvm::StringRef what) {
        for (SymExpr e : exprs) {
          if (!e)
            report(node, label(node) + ": tensor type has a missing " + what);
          else if (e.isConstant() && e.constantValue() < 0)
            report(node, label(node) + ": tensor type has negative " + what + " " +
                             llvm::Twine(e.constantValue()));
        }
      };
      checkExtents(type.sizes(), "size");
      checkExtents(type.strides(), "stride");
    }
    if (type.isSequence())
      for (const Type& element : type.elements())
        checkTypeRecursive(node, element, reported);
    else
      type.walkSymExprs([&](SymExpr e) {
        if (e)
          checkSymbolsDeclared(e, node.loc(), label(node), reported, node.location().suffix());
      });
  }

  /// The guards block: each guard complete for its kind, sources that print
  /// as text that parses back and read only the block's locals, tensor types
  /// well-formed over the graph's symbols.
  void checkGuards() {
    const GuardSet& guards = graph_.guards();
    llvm::StringSet<> locals;
    for (const std::string& name : guards.localNames())
      if (!locals.insert(name).second)
        report(guards.loc(), "guards: local '" + name + "' is named more than once");
    for (const Guard& guard : guards.guards()) {
      llvm::SMLoc loc = guard.loc.isValid() ? guard.loc : guards.loc();
      std::string what;
      llvm::raw_string_ostream os(what);
      os << "guard '";
      guard.print(os);
      os << "'";
      bool sourced = guard.kind == GuardKind::Tensor || guard.kind == GuardKind::Type ||
                     guard.kind == GuardKind::Equals || guard.kind == GuardKind::None ||
                     guard.kind == GuardKind::Length || guard.kind == GuardKind::Keys ||
                     guard.kind == GuardKind::Empty || guard.kind == GuardKind::Absent ||
                     guard.kind == GuardKind::Function || guard.kind == GuardKind::Builtin ||
                     guard.kind == GuardKind::SymInt || guard.kind == GuardKind::Same ||
                     guard.kind == GuardKind::Distinct || guard.kind == GuardKind::HasKey ||
                     guard.kind == GuardKind::LacksKey || guard.kind == GuardKind::Class ||
                     guard.kind == GuardKind::AutogradLeaf;
      if (sourced != bool(guard.source)) {
        report(loc, what + (sourced ? " has no source" : " takes no source"));
      } else if (guard.source) {
        llvm::Expected<SourcePtr> reread = Source::parse(guard.source->str());
        if (!reread)
          report(loc, what + ": " + llvm::toString(reread.takeError()));
        const Source& root = guard.source->root();
        if (root.kind() == Source::Kind::Local && !locals.contains(root.name()))
          report(loc, what + ": L['" + root.name() +
                          "'] is not among the local names of the guards block");
      }
      switch (guard.kind) {
      case GuardKind::Tensor:
        if (!guard.tensorType || !guard.tensorType->isTensor())
          report(loc, what + " has no tensor type");
        else
          checkGuardType(*guard.tensorType, loc, what);
        break;
      case GuardKind::Type:
      case GuardKind::Function:
      case GuardKind::Builtin:
      case GuardKind::Class:
        if (guard.typeModule.empty() || guard.typeQualname.empty())
          report(loc, what + " needs a module and a qualified name");
        if (guard.kind == GuardKind::Function && guard.firstLine < 0)
          report(loc, what + ": a first line is not negative");
        break;
      case GuardKind::Absent:
        if (guard.source && guard.source->kind() != Source::Kind::Attr &&
            guard.source->kind() != Source::Kind::ClassAttr &&
            !(guard.source->kind() == Source::Kind::Item && !guard.source->hasIndex() &&
              !guard.source->typedKey()))
          report(loc, what + ": an absent guard names an attribute, base.name or "
                             "type(base).name, or a dict's entry of a str key, base['key']");
        break;
      case GuardKind::Equals: {
        Argument::Kind kind = guard.constant ? guard.constant->kind() : Argument::Kind::None;
        if (kind != Argument::Kind::Bool && kind != Argument::Kind::Float &&
            kind != Argument::Kind::String && !isTorchConstant(kind) &&
            !(kind == Argument::Kind::Sym && guard.constant->symValue().isConstant()))
          report(loc, what + " must compare with a bool, int, float, string, dtype, device, layout "
                             "or memory format");
        if (std::optional<llvm::StringRef> digits = bigIntOf(guard);
            digits && !isBigIntDecimal(*digits))
          report(loc, what + ": an int beyond 64 bits is written in canonical decimal and does "
                             "not fit in 64 bits");
        break;
      }
      case GuardKind::Version:
        if (!isIdentifier(guard.versionOf))
          report(loc, what + ": '" + guard.versionOf + "' is not an identifier");
        break;
      case GuardKind::Length:
        if (guard.length < 0)
          report(loc, what + ": a length is not negative");
        break;
      case GuardKind::Keys:
        break;
      case GuardKind::SymInt:
        if (!guard.constant || guard.constant->kind() != Argument::Kind::Sym ||
            !guard.constant->symValue())
          report(loc, what + " needs the int's symbolic integer");
        else {
          llvm::StringSet<> reported;
          checkSymbolsDeclared(guard.constant->symValue(), loc, what, reported);
        }
        break;
      case GuardKind::None:
      case GuardKind::Empty:
      case GuardKind::AutogradLeaf:
      case GuardKind::GradMode:
      case GuardKind::DefaultDType:
      case GuardKind::GlobalState:
        break;
      case GuardKind::Same:
      case GuardKind::Distinct:
      case GuardKind::HasKey:
      case GuardKind::LacksKey:
        if (!guard.other)
          report(loc, what + " needs the source it compares with");
        else if (guard.source && *guard.other == *guard.source)
          report(loc, what + " compares a source with itself");
        else if (const Source& root = guard.other->root();
                 root.kind() == Source::Kind::Local && !locals.contains(root.name()))
          report(loc, what + ": L['" + root.name() +
                          "'] is not among the local names of the guards block");
        break;
      }
    }
  }

  void checkGuardType(const Type& type, llvm::SMLoc loc, llvm::StringRef what) {
    if (type.isSparse()) {
      if (std::string problem = sparseTypeProblem(type); !problem.empty())
        report(loc, what + ": " + problem);
    } else if (type.sizes().size() != type.strides().size())
      report(loc, what + ": tensor type has " + llvm::Twine(type.sizes().size()) + " sizes but " +
                      llvm::Twine(type.strides().size()) + " strides");
    for (SymExpr e : llvm::concat<const SymExpr>(type.sizes(), type.strides()))
      if (e && e.isConstant() && e.constantValue() < 0)
        report(loc, what + ": tensor type has a negative size or stride");
    llvm::StringSet<> reported;
    type.walkSymExprs([&](SymExpr e) {
      if (e)
        checkSymbolsDeclared(e, loc, what, reported);
    });
  }

  const Graph& graph_;
  DiagnosticSink& sink_;
  llvm::StringSet<> declared_;
  llvm::DenseMap<const Node*, size_t> position_;
};

} // namespace

llvm::Error verify(const Graph& graph, const llvm::SourceMgr* sm) {
  DiagnosticSink sink(sm);
  GraphVerifier(graph, sink).run();
  return sink.takeError();
}

llvm::Error verify(const Module& module, const llvm::SourceMgr* sm) {
  DiagnosticSink sink(sm);
  // Kernels and graphs share one namespace; kernels come first, as printed.
  llvm::StringSet<> names;
  auto verifyAll = [&](llvm::ArrayRef<std::unique_ptr<Graph>> graphs) {
    for (const std::unique_ptr<Graph>& graph : graphs) {
      if (!names.insert(graph->name()).second)
        sink.report(*graph, graph->loc(),
                    (graph->isKernel()     ? "kernel @"
                     : graph->isBackward() ? "backward graph @"
                     : graph->isSubgraph() ? "subgraph @"
                                           : "graph @") +
                        graph->name() + " is defined more than once");
      GraphVerifier(*graph, sink).run();
    }
  };
  verifyAll(module.kernels());
  verifyAll(module.subgraphs());
  verifyAll(module.backwards());
  verifyAll(module.graphs());
  return sink.takeError();
}

} // namespace dync::ir
