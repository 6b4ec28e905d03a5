//===- AutogradFunction.cpp - The node applying an autograd.Function ------===//
#include "ir/AutogradFunction.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"

namespace dync::ir {

namespace {

Argument valueList(const std::vector<ValueRef>& refs) {
  std::vector<Argument> elements;
  for (const ValueRef& ref : refs)
    elements.push_back(Argument::value(ref.node, ref.index));
  return Argument::list(std::move(elements));
}

llvm::Error malformed(const llvm::Twine& what) {
  return llvm::createStringError(llvm::Twine(AutogradFunctionOp) + ": " + what);
}

llvm::Expected<std::vector<ValueRef>> readValues(const Argument& arg, llvm::StringRef what) {
  if (arg.kind() != Argument::Kind::List)
    return malformed(what + " must be a list of values");
  std::vector<ValueRef> refs;
  for (const Argument& element : arg.elements()) {
    if (!element.isValue())
      return malformed(what + " must be a list of values");
    refs.push_back(element.valueRef());
  }
  return refs;
}

} // namespace

std::unique_ptr<Node> makeAutogradFunctionCall(Context& ctx, std::string name,
                                               const AutogradFunctionCall& call) {
  std::vector<Argument> gradIndex, differentiable;
  for (int64_t index : call.gradIndex)
    gradIndex.push_back(Argument::sym(ctx.constant(index)));
  std::vector<Type> types;
  for (const ValueRef& ref : call.outputs)
    types.push_back(*ref.node->resultType(ref.index));
  for (bool flag : call.differentiable)
    differentiable.push_back(Argument::boolean(flag));
  std::vector<Argument> args;
  args.push_back(Argument::string(call.function));
  args.push_back(Argument::string(call.backward));
  args.push_back(valueList(call.inputs));
  args.push_back(valueList(call.outputs));
  args.push_back(valueList(call.saved));
  args.push_back(Argument::list(std::move(gradIndex)));
  args.push_back(Argument::list(std::move(differentiable)));
  args.push_back(Argument::boolean(call.materializeGrads));
  std::vector<Argument> sizes;
  for (SymExpr size : call.sizes)
    sizes.push_back(Argument::sym(size));
  args.push_back(Argument::list(std::move(sizes)));
  std::vector<Argument> dirty;
  for (int64_t index : call.dirty)
    dirty.push_back(Argument::sym(ctx.constant(index)));
  args.push_back(Argument::list(std::move(dirty)));
  return Node::call(std::move(name), AutogradFunctionOp.str(), std::move(args), {},
                    Type::tuple(types));
}

llvm::Expected<AutogradFunctionCall> readAutogradFunctionCall(const Node& node) {
  const std::vector<Argument>& args = node.args();
  if (args.size() != 10 || !node.kwargs().empty())
    return malformed("takes 10 positional arguments");
  AutogradFunctionCall call;
  if (args[0].kind() != Argument::Kind::String || args[1].kind() != Argument::Kind::String)
    return malformed("the function's and the backward graph's names must be strings");
  call.function = args[0].stringValue();
  call.backward = args[1].stringValue();
  for (auto [index, out, what] :
       {std::tuple{2, &call.inputs, "the inputs"}, std::tuple{3, &call.outputs, "the outputs"},
        std::tuple{4, &call.saved, "the saved tensors"}}) {
    llvm::Expected<std::vector<ValueRef>> refs = readValues(args[index], what);
    if (!refs)
      return refs.takeError();
    *out = std::move(*refs);
  }
  if (args[5].kind() != Argument::Kind::List)
    return malformed("the gradient indices must be a list of ints");
  for (const Argument& element : args[5].elements()) {
    if (element.kind() != Argument::Kind::Sym || !element.symValue().isConstant())
      return malformed("the gradient indices must be a list of ints");
    call.gradIndex.push_back(element.symValue().constantValue());
  }
  if (args[6].kind() != Argument::Kind::List)
    return malformed("the differentiable flags must be a list of bools");
  for (const Argument& element : args[6].elements()) {
    if (element.kind() != Argument::Kind::Bool)
      return malformed("the differentiable flags must be a list of bools");
    call.differentiable.push_back(element.boolValue());
  }
  if (args[7].kind() != Argument::Kind::Bool)
    return malformed("materialize_grads must be a bool");
  call.materializeGrads = args[7].boolValue();
  if (args[8].kind() != Argument::Kind::List)
    return malformed("the sizes must be a list of ints");
  for (const Argument& element : args[8].elements()) {
    if (element.kind() != Argument::Kind::Sym)
      return malformed("the sizes must be a list of ints");
    call.sizes.push_back(element.symValue());
  }
  if (args[9].kind() != Argument::Kind::List)
    return malformed("the modified inputs must be a list of ints");
  for (const Argument& element : args[9].elements()) {
    if (element.kind() != Argument::Kind::Sym || !element.symValue().isConstant())
      return malformed("the modified inputs must be a list of ints");
    call.dirty.push_back(element.symValue().constantValue());
  }
  return call;
}

std::vector<const Graph*> backwardGraphsOf(const Graph& graph) {
  std::vector<const Graph*> backwards;
  for (const Node& node : graph.nodes()) {
    if (!isAutogradFunctionCall(node) || !graph.module())
      continue;
    llvm::Expected<AutogradFunctionCall> call = readAutogradFunctionCall(node);
    if (!call) {
      llvm::consumeError(call.takeError());
      continue;
    }
    const Graph* backward = graph.module()->findBackward(call->backward);
    if (backward && !llvm::is_contained(backwards, backward))
      backwards.push_back(backward);
  }
  return backwards;
}

std::vector<SymExpr> unboundSymbols(const Graph& graph) {
  llvm::DenseSet<SymExpr> bound;
  for (const Node& input : graph.inputs()) {
    if (input.type().kind() == Type::Kind::Int && input.type().intValue() &&
        input.type().intValue().isSymbol())
      bound.insert(input.type().intValue());
    if (input.type().isTensor())
      for (SymExpr size : input.type().sizes())
        if (size.isSymbol())
          bound.insert(size);
  }
  std::vector<SymExpr> unbound;
  forEachMentionedSymbol(graph, [&](SymExpr symbol) {
    if (!bound.count(symbol) && !llvm::is_contained(unbound, symbol))
      unbound.push_back(symbol);
  });
  return unbound;
}

void forEachMentionedSymbol(const Graph& graph, llvm::function_ref<void(SymExpr)> fn) {
  auto note = [&](SymExpr e) {
    if (e)
      e.walkSymbols(fn);
  };
  for (const Node& node : graph.nodes()) {
    node.type().walkSymExprs(note);
    for (const Argument& arg : node.args())
      arg.forEachSym(note);
    for (const KeywordArgument& kwarg : node.kwargs())
      kwarg.value.forEachSym(note);
  }
}

std::string checkAutogradFunctionCall(const Node& node, const Module* module) {
  llvm::Expected<AutogradFunctionCall> call = readAutogradFunctionCall(node);
  if (!call)
    return llvm::toString(call.takeError());
  const Graph* backward = module ? module->findBackward(call->backward) : nullptr;
  if (!backward)
    return "no backward graph @" + call->backward + " in the module";
  if (call->gradIndex.size() != call->inputs.size())
    return "one gradient index per input is needed";
  if (call->differentiable.size() != call->outputs.size())
    return "one differentiable flag per output is needed";
  if (call->dirty.size() != call->outputs.size())
    return "one modified input index per output is needed";
  for (int64_t index : call->dirty)
    if (index < -1 || index >= static_cast<int64_t>(call->inputs.size()))
      return "modified input " + std::to_string(index) + " is not -1 or one of the " +
             std::to_string(call->inputs.size()) + " inputs";
  size_t tensors = 0, ints = 0;
  for (const Node& input : backward->inputs())
    ++(input.type().isTensor() ? tensors : ints);
  if (tensors != call->saved.size() + call->outputs.size())
    return "@" + call->backward + " takes " + std::to_string(tensors) +
           " tensors, not the saved tensors and one gradient per output (" +
           std::to_string(call->saved.size() + call->outputs.size()) + ")";
  if (ints != call->sizes.size())
    return "@" + call->backward + " takes " + std::to_string(ints) + " ints, not the " +
           std::to_string(call->sizes.size()) + " sizes the node passes";
  size_t k = 0;
  for (const Node& input : backward->inputs())
    if (!input.type().isTensor() && !(input.type().intValue() == call->sizes[k++]))
      return "size " + std::to_string(k - 1) + " is not the value of @" + call->backward +
             "'s input %" + input.name() + " (" + input.type().str() + ")";
  int64_t leaves = static_cast<int64_t>(outputLeaves(*backward).size());
  for (int64_t index : call->gradIndex)
    if (index < -1 || index >= leaves)
      return "gradient index " + std::to_string(index) + " is not -1 or one of @" + call->backward +
             "'s " + std::to_string(leaves) + " tensor results";
  const Type& type = node.type();
  if (type.kind() != Type::Kind::Tuple || type.elements().size() != call->outputs.size())
    return "the type must be a tuple of the outputs' types";
  for (size_t i = 0; i < call->outputs.size(); ++i) {
    const Type* output = call->outputs[i].node->resultType(call->outputs[i].index);
    if (!output || !output->isTensor() || !(*output == type.elements()[i]))
      return "result " + std::to_string(i) + " must have output " + std::to_string(i) + "'s type";
  }
  return "";
}

} // namespace dync::ir
