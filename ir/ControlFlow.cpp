//===- ControlFlow.cpp - torch.cond as a node over two subgraphs ----------===//
#include "ir/ControlFlow.h"

#include "ir/WhileLoop.h"

namespace dync::ir {

namespace {
/// Arguments before the operands: the predicate and the two branch names.
constexpr size_t kCondFixedArguments = 3;
} // namespace

bool isCondCall(const Node& node) { return node.isCall() && node.op() == kCondOperator; }

const Argument& condPredicate(const Node& cond) { return cond.args()[0]; }

llvm::StringRef condBranchName(const Node& cond, bool taken) {
  return cond.args()[taken ? 1 : 2].stringValue();
}

llvm::ArrayRef<Argument> condOperands(const Node& cond) {
  return llvm::ArrayRef(cond.args()).drop_front(kCondFixedArguments);
}

std::optional<Type> subgraphResultType(const Graph& subgraph) {
  const Node* output = subgraph.output();
  if (!output || output->args().size() != 1 ||
      output->returnValue().kind() != Argument::Kind::Tuple)
    return std::nullopt;
  std::vector<Type> elements;
  for (const Argument& element : output->returnValue().elements()) {
    const Type* type = element.isValue() && element.valueRef().node
                           ? element.valueRef().node->resultType(element.valueRef().index)
                           : nullptr;
    if (!type || !type->isTensor())
      return std::nullopt;
    elements.push_back(*type);
  }
  return Type::tuple(elements);
}

std::vector<llvm::StringRef> calledSubgraphNames(const Node& node) {
  size_t first = 0;
  if (isCondCall(node))
    first = 1;
  else if (!isWhileLoopCall(node))
    return {};
  std::vector<llvm::StringRef> names;
  for (size_t i = first; i < first + 2 && i < node.args().size(); ++i)
    if (node.args()[i].kind() == Argument::Kind::String)
      names.push_back(node.args()[i].stringValue());
  return names;
}

namespace {

void collectSubgraphs(const Graph& graph, std::vector<const Graph*>& found) {
  const Module* module = graph.module();
  if (!module)
    return;
  for (const Node& node : graph.nodes()) {
    for (llvm::StringRef name : calledSubgraphNames(node)) {
      const Graph* called = module->findSubgraph(name);
      if (!called || llvm::is_contained(found, called))
        continue;
      collectSubgraphs(*called, found);
      found.push_back(called);
    }
  }
}

} // namespace

std::vector<const Graph*> condSubgraphs(const Graph& graph) {
  std::vector<const Graph*> found;
  collectSubgraphs(graph, found);
  return found;
}

namespace {

/// The rules between \p cond and the subgraph it runs when its predicate is
/// \p taken.
void checkBranch(const Graph& caller, const Node& cond, bool taken,
                 llvm::function_ref<void(const llvm::Twine&)> report) {
  std::string name = condBranchName(cond, taken).str();
  std::string what = (taken ? "true branch @" : "false branch @") + name;
  const Graph* branch = caller.module() ? caller.module()->findSubgraph(name) : nullptr;
  if (!branch) {
    report("no subgraph @" + name + " in the module for the " + (taken ? "true" : "false") +
           " branch");
    return;
  }
  std::vector<const Node*> inputs;
  for (const Node& input : branch->inputs())
    inputs.push_back(&input);
  llvm::ArrayRef<Argument> operands = condOperands(cond);
  if (operands.size() != inputs.size()) {
    report("the cond passes " + llvm::Twine(operands.size()) + " operands, but " + what +
           " takes " + llvm::Twine(inputs.size()));
    return;
  }
  for (auto [i, operand, input] : llvm::enumerate(operands, inputs)) {
    const Type* type = operand.isValue() && operand.valueRef().node
                           ? operand.valueRef().node->resultType(operand.valueRef().index)
                           : nullptr;
    if (!type)
      report("operand " + llvm::Twine(i) + " is not a value");
    else if (*type != input->type())
      report("operand " + llvm::Twine(i) + " has type " + type->str() + ", but input %" +
             input->name() + " of " + what + " has type " + input->type().str());
  }
  // A branch's result may not require grad where the cond's does (the
  // other branch's, or an operand's, does).
  auto plain = [](const Type& type) {
    std::vector<Type> elements;
    for (const Type& element : type.elements())
      elements.push_back(element.isTensor() ? Type::tensor(element.dtype(), element.sizes(),
                                                           element.strides(), element.device())
                                            : element);
    return Type::tuple(elements);
  };
  std::optional<Type> result = subgraphResultType(*branch);
  if (result && (cond.type().kind() != Type::Kind::Tuple || plain(cond.type()) != plain(*result)))
    report("the cond has type " + cond.type().str() + ", but " + what + " returns " +
           result->str());
  for (const SymbolDecl& decl : branch->symbols())
    if (!caller.findSymbol(decl.name))
      report(what + " mentions the symbol '" + decl.name + "', which this graph does not declare");
}

} // namespace

void checkCondCall(const Graph& caller, const Node& cond,
                   llvm::function_ref<void(const llvm::Twine&)> report) {
  const std::vector<Argument>& args = cond.args();
  if (!cond.kwargs().empty())
    report("a cond takes no keyword arguments");
  if (args.size() < kCondFixedArguments) {
    report("a cond takes a predicate, two subgraph names and the operands");
    return;
  }
  const Argument& pred = condPredicate(cond);
  const Type* predType = pred.isValue() && pred.valueRef().node
                             ? pred.valueRef().node->resultType(pred.valueRef().index)
                             : nullptr;
  if (!predType || predType->kind() != Type::Kind::Bool)
    report("a cond's predicate must be a bool value");
  bool named = true;
  for (size_t i : {1, 2})
    if (args[i].kind() != Argument::Kind::String) {
      report("argument " + llvm::Twine(i) + " of a cond must name a subgraph, as a string");
      named = false;
    }
  if (!named)
    return;
  checkBranch(caller, cond, true, report);
  checkBranch(caller, cond, false, report);
}

void checkSubgraphResult(const Graph& subgraph,
                         llvm::function_ref<void(const llvm::Twine&)> report) {
  const Node* output = subgraph.output();
  if (!output || output->args().size() != 1 + output->sideEffects().size())
    return;
  if (!output->sideEffects().empty())
    report("subgraph @" + subgraph.name() + " has side effects; a subgraph has none");
  if (!subgraphResultType(subgraph))
    report("subgraph @" + subgraph.name() + " must return a tuple of tensor values");
}

} // namespace dync::ir
