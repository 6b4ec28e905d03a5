//===- Graph.cpp - Graphs of ATen operator calls --------------------------===//
#include "ir/Graph.h"

namespace dync::ir {

std::unique_ptr<Node> Node::input(std::string name, Type type, std::string source) {
  std::unique_ptr<Node> node(new Node(NodeKind::Input));
  node->name_ = std::move(name);
  node->type_ = std::move(type);
  node->target_ = std::move(source);
  return node;
}

std::unique_ptr<Node> Node::call(std::string name, std::string op, std::vector<Argument> args,
                                 std::vector<KeywordArgument> kwargs, Type type) {
  std::unique_ptr<Node> node(new Node(NodeKind::Call));
  node->name_ = std::move(name);
  node->target_ = std::move(op);
  node->args_ = std::move(args);
  node->kwargs_ = std::move(kwargs);
  node->type_ = std::move(type);
  return node;
}

std::unique_ptr<Node> Node::output(Argument result) {
  std::unique_ptr<Node> node(new Node(NodeKind::Output));
  node->args_.push_back(std::move(result));
  return node;
}

std::unique_ptr<Node> Node::output(Argument result,
                                   std::vector<std::pair<SideEffect, Argument>> effects) {
  std::unique_ptr<Node> node = output(std::move(result));
  for (auto& [effect, value] : effects)
    node->addSideEffect(std::move(effect), std::move(value));
  return node;
}

const Type* Node::resultType(std::optional<unsigned> index) const {
  if (!index)
    return &type_;
  if (!type_.isSequence() || *index >= type_.elements().size())
    return nullptr;
  return &type_.elements()[*index];
}

void Node::forEachUse(llvm::function_ref<void(const ValueRef&)> fn) const {
  for (const Argument& arg : args_)
    arg.forEachValue(fn);
  for (const KeywordArgument& kwarg : kwargs_)
    kwarg.value.forEachValue(fn);
}

Node* Graph::insert(NodeList::iterator before, std::unique_ptr<Node> node) {
  Node* raw = node.release();
  nodes_.insert(before, raw);
  return raw;
}

const Node* Graph::output() const {
  if (nodes_.empty() || !nodes_.back().isOutput())
    return nullptr;
  return &nodes_.back();
}

const SymbolDecl* Graph::findSymbol(llvm::StringRef name) const {
  for (const SymbolDecl& decl : symbols_)
    if (decl.name == name)
      return &decl;
  return nullptr;
}

std::vector<ValueRef> outputLeaves(const Graph& graph) {
  std::vector<ValueRef> leaves;
  const Node* output = graph.output();
  if (!output)
    return leaves;
  // Floats and bools a node computes (item() of a float tensor) are
  // returned too, each as a 0-dim tensor that holds it exactly. Values of
  // other types (an int input, a symbolic size) are rebuilt by the
  // rewritten bytecode, not returned by the compiled graph.
  for (const Argument& arg : output->args())
    arg.forEachValue([&](const ValueRef& ref) {
      const Type* type = ref.node ? ref.node->resultType(ref.index) : nullptr;
      if (type && (type->isTensor() || (ref.node->isCall() && (type->kind() == Type::Kind::Float ||
                                                               type->kind() == Type::Kind::Bool))))
        leaves.push_back(ref);
    });
  // Then, for each data-dependent int the returned value mentions (`u0`, as
  // item() of an integer tensor computes it), the node computing it as its
  // `int<u0>` value: no input binds it, so the graph returns it, last.
  llvm::SmallVector<std::string, 2> unbacked;
  for (const Argument& arg : output->args())
    arg.forEachSym([&](SymExpr expr) {
      expr.walkSymbols([&](SymExpr symbol) {
        const SymbolDecl* decl = graph.findSymbol(symbol.symbolName());
        if (decl && decl->unbacked && !llvm::is_contained(unbacked, decl->name))
          unbacked.push_back(decl->name);
      });
    });
  for (const std::string& name : unbacked)
    if (const Node* node = unbackedIntNode(graph, name))
      leaves.push_back(ValueRef{const_cast<Node*>(node), std::nullopt});
  return leaves;
}

const Node* unbackedIntNode(const Graph& graph, llvm::StringRef symbol) {
  for (const Node& node : graph.nodes()) {
    const Type& type = node.type();
    if (node.isCall() && type.kind() == Type::Kind::Int && type.intValue() &&
        type.intValue().isSymbol() && type.intValue().symbolName() == symbol)
      return &node;
  }
  return nullptr;
}

std::optional<Type> kernelResultType(const Graph& kernel) {
  const Node* output = kernel.output();
  if (!output || output->args().size() != 1)
    return std::nullopt;
  auto tensorType = [](const Argument& arg) -> const Type* {
    if (!arg.isValue() || !arg.valueRef().node)
      return nullptr;
    const Type* type = arg.valueRef().node->resultType(arg.valueRef().index);
    return type && type->isTensor() ? type : nullptr;
  };
  const Argument& result = output->returnValue();
  if (result.kind() != Argument::Kind::Tuple) {
    const Type* type = tensorType(result);
    return type ? std::optional<Type>(*type) : std::nullopt;
  }
  std::vector<Type> elements;
  for (const Argument& element : result.elements()) {
    const Type* type = tensorType(element);
    if (!type)
      return std::nullopt;
    elements.push_back(*type);
  }
  return Type::tuple(elements);
}

Graph& Module::addGraph(std::string name) {
  graphs_.push_back(std::make_unique<Graph>(ctx_, std::move(name)));
  graphs_.back()->module_ = this;
  return *graphs_.back();
}

Graph& Module::addKernel(std::string name) {
  kernels_.push_back(std::make_unique<Graph>(ctx_, std::move(name), GraphKind::Kernel));
  kernels_.back()->module_ = this;
  return *kernels_.back();
}

Graph* Module::findKernel(llvm::StringRef name) const {
  for (const std::unique_ptr<Graph>& kernel : kernels_)
    if (kernel->name() == name)
      return kernel.get();
  return nullptr;
}

std::string Module::freshKernelName() const {
  for (unsigned i = kernels_.size();; ++i) {
    std::string name = "k" + std::to_string(i);
    if (!hasName(name))
      return name;
  }
}

Graph& Module::addSubgraph(std::string name) {
  subgraphs_.push_back(std::make_unique<Graph>(ctx_, std::move(name), GraphKind::Subgraph));
  subgraphs_.back()->module_ = this;
  return *subgraphs_.back();
}

Graph* Module::findSubgraph(llvm::StringRef name) const {
  for (const std::unique_ptr<Graph>& subgraph : subgraphs_)
    if (subgraph->name() == name)
      return subgraph.get();
  return nullptr;
}

void Module::eraseSubgraph(const Graph& subgraph) {
  llvm::erase_if(subgraphs_, [&](const std::unique_ptr<Graph>& g) { return g.get() == &subgraph; });
}

Graph& Module::addBackward(std::string name) {
  backwards_.push_back(std::make_unique<Graph>(ctx_, std::move(name), GraphKind::Backward));
  backwards_.back()->module_ = this;
  return *backwards_.back();
}

Graph* Module::findBackward(llvm::StringRef name) const {
  for (const std::unique_ptr<Graph>& graph : backwards_)
    if (graph->name() == name)
      return graph.get();
  return nullptr;
}

std::string Module::freshName(llvm::StringRef base) const {
  auto taken = [&](llvm::StringRef name) { return hasName(name); };
  if (!taken(base))
    return base.str();
  for (unsigned i = 1;; ++i) {
    std::string name = (base + "." + llvm::Twine(i)).str();
    if (!taken(name))
      return name;
  }
}

Graph* Module::findGraph(llvm::StringRef name) const {
  for (const std::unique_ptr<Graph>& graph : graphs_)
    if (graph->name() == name)
      return graph.get();
  return nullptr;
}

} // namespace dync::ir
