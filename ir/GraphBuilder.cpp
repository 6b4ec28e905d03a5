//===- GraphBuilder.cpp - Building graphs from capture --------------------===//
#include "ir/GraphBuilder.h"

namespace dync::ir {

GraphBuilder::GraphBuilder(Graph& graph) : graph_(graph) {
  for (const Node& node : graph.nodes())
    if (!node.isOutput())
      names_.insert(node.name());
}

std::string GraphBuilder::uniqueName(llvm::StringRef hint) {
  if (hint.empty()) {
    std::string name;
    do
      name = std::to_string(nextNumber_++);
    while (names_.contains(name));
    names_.insert(name);
    return name;
  }
  std::string name = hint.str();
  for (unsigned suffix = 1; names_.contains(name); ++suffix)
    name = (hint + "_" + llvm::Twine(suffix)).str();
  names_.insert(name);
  return name;
}

SymExpr GraphBuilder::declareSymbol(llvm::StringRef name, SymbolRange range, bool unbacked) {
  graph_.symbols().push_back({name.str(), range, llvm::SMLoc()});
  graph_.symbols().back().unbacked = unbacked;
  return context().symbol(name);
}

void GraphBuilder::addRelation(SymExpr lhs, RelationKind kind, SymExpr rhs) {
  graph_.relations().push_back({lhs, kind, rhs, llvm::SMLoc()});
}

Node* GraphBuilder::addInput(llvm::StringRef name, Type type, llvm::StringRef source) {
  auto after = llvm::find_if(graph_.nodes(), [](const Node& n) { return !n.isInput(); });
  // Inputs are not stamped: an input is a read of the frame, not a line of
  // the program, and the header of a graph stays as it was.
  return graph_.insert(after, Node::input(uniqueName(name), std::move(type), source.str()));
}

Node* GraphBuilder::addCall(llvm::StringRef op, std::vector<Argument> args,
                            std::vector<KeywordArgument> kwargs, Type result,
                            llvm::StringRef name) {
  return located(graph_.append(Node::call(uniqueName(name), op.str(), std::move(args),
                                          std::move(kwargs), std::move(result))));
}

Node* GraphBuilder::setOutput(Argument result) {
  return located(graph_.append(Node::output(std::move(result))));
}

Node* GraphBuilder::located(Node* node) {
  if (locationSource_)
    node->setLocation(locationSource_());
  return node;
}

} // namespace dync::ir
