//===- WhileLoop.cpp - torch's while_loop as a node over two subgraphs ----===//
#include "ir/WhileLoop.h"

#include "ir/ControlFlow.h"

namespace dync::ir {

namespace {
/// Arguments of a while_loop node: cond's name, body's name, the carried
/// values, the additional inputs.
constexpr size_t kWhileLoopArguments = 4;

/// The type of \p arg when it is a value, or null.
const Type* valueType(const Argument& arg) {
  return arg.isValue() && arg.valueRef().node
             ? arg.valueRef().node->resultType(arg.valueRef().index)
             : nullptr;
}

/// \p type without requires_grad: a subgraph's results and the node's
/// may differ in it alone (the caller's operands decide it).
Type plain(const Type& type) {
  if (type.isTensor())
    return Type::tensor(type.dtype(), type.sizes(), type.strides(), type.device());
  if (type.kind() != Type::Kind::Tuple)
    return type;
  std::vector<Type> elements;
  for (const Type& element : type.elements())
    elements.push_back(plain(element));
  return Type::tuple(elements);
}

/// Checks that \p subgraph takes \p operands (carried then additional) and
/// declares no symbol \p caller does not.
void checkInputs(const Graph& caller, const Graph& subgraph,
                 llvm::ArrayRef<const Argument*> operands, const std::string& what,
                 llvm::function_ref<void(const llvm::Twine&)> report) {
  std::vector<const Node*> inputs;
  for (const Node& input : subgraph.inputs())
    inputs.push_back(&input);
  if (operands.size() != inputs.size()) {
    report("the while_loop passes " + llvm::Twine(operands.size()) + " operands, but " + what +
           " takes " + llvm::Twine(inputs.size()));
    return;
  }
  for (auto [i, operand, input] : llvm::enumerate(operands, inputs)) {
    const Type* type = valueType(*operand);
    if (!type)
      report("operand " + llvm::Twine(i) + " is not a value");
    else if (*type != input->type())
      report("operand " + llvm::Twine(i) + " has type " + type->str() + ", but input %" +
             input->name() + " of " + what + " has type " + input->type().str());
  }
  for (const SymbolDecl& decl : subgraph.symbols())
    if (!caller.findSymbol(decl.name))
      report(what + " mentions the symbol '" + decl.name + "', which this graph does not declare");
}

/// The subgraph \p name of \p caller's module, or null after reporting.
const Graph* findNamed(const Graph& caller, llvm::StringRef name, llvm::StringRef role,
                       llvm::function_ref<void(const llvm::Twine&)> report) {
  const Graph* found = caller.module() ? caller.module()->findSubgraph(name) : nullptr;
  if (!found)
    report("no subgraph @" + name + " in the module for the " + role + " function");
  return found;
}

} // namespace

bool isWhileLoopCall(const Node& node) { return node.isCall() && node.op() == kWhileLoopOperator; }

llvm::StringRef whileLoopCondName(const Node& loop) { return loop.args()[0].stringValue(); }

llvm::StringRef whileLoopBodyName(const Node& loop) { return loop.args()[1].stringValue(); }

llvm::ArrayRef<Argument> whileLoopCarried(const Node& loop) { return loop.args()[2].elements(); }

llvm::ArrayRef<Argument> whileLoopAdditional(const Node& loop) { return loop.args()[3].elements(); }

void checkWhileLoopCall(const Graph& caller, const Node& loop,
                        llvm::function_ref<void(const llvm::Twine&)> report) {
  const std::vector<Argument>& args = loop.args();
  if (!loop.kwargs().empty())
    report("a while_loop takes no keyword arguments");
  if (args.size() != kWhileLoopArguments) {
    report("a while_loop takes two subgraph names, a list of carried values and a list of "
           "additional inputs");
    return;
  }
  bool wellFormed = true;
  for (size_t i : {0, 1})
    if (args[i].kind() != Argument::Kind::String) {
      report("argument " + llvm::Twine(i) + " of a while_loop must name a subgraph, as a string");
      wellFormed = false;
    }
  for (size_t i : {2, 3})
    if (args[i].kind() != Argument::Kind::List) {
      report("argument " + llvm::Twine(i) + " of a while_loop must be a list of values");
      wellFormed = false;
    }
  if (!wellFormed)
    return;

  std::vector<const Argument*> operands;
  std::vector<Type> carriedTypes;
  for (const Argument& carried : whileLoopCarried(loop)) {
    operands.push_back(&carried);
    const Type* type = valueType(carried);
    if (type && !type->isTensor())
      report("a while_loop carries tensors, not " + type->str());
    carriedTypes.push_back(type ? plain(*type) : Type::none());
  }
  for (const Argument& additional : whileLoopAdditional(loop))
    operands.push_back(&additional);
  if (loop.type().kind() != Type::Kind::Tuple || plain(loop.type()) != Type::tuple(carriedTypes))
    report("the while_loop has type " + loop.type().str() + ", but its carried values have types " +
           Type::tuple(carriedTypes).str());

  if (const Graph* cond = findNamed(caller, whileLoopCondName(loop), "cond", report)) {
    std::string what = "cond @" + cond->name();
    checkInputs(caller, *cond, operands, what, report);
    std::optional<Type> result = subgraphResultType(*cond);
    auto scalarBool = [](const Type& type) {
      return type.isTensor() && type.dtype() == DType::Bool && type.sizes().empty();
    };
    if (result && (result->elements().size() != 1 || !scalarBool(result->elements()[0])))
      report(what + " returns " + result->str() +
             ", but a while_loop's cond returns one bool tensor of no dimensions");
  }
  if (const Graph* body = findNamed(caller, whileLoopBodyName(loop), "body", report)) {
    std::string what = "body @" + body->name();
    checkInputs(caller, *body, operands, what, report);
    std::optional<Type> result = subgraphResultType(*body);
    if (result && plain(*result) != Type::tuple(carriedTypes))
      report(what + " returns " + result->str() + ", but the while_loop carries " +
             Type::tuple(carriedTypes).str());
  }
}

} // namespace dync::ir
