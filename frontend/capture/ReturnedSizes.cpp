//===- ReturnedSizes.cpp - Data-dependent sizes the function returns -----===//
#include "frontend/capture/ReturnedSizes.h"

#include "frontend/capture/CaptureError.h"

#include "llvm/ADT/STLExtras.h"

namespace dync::capture {

namespace {

/// The first call with a tensor result (or tuple element) whose dimension
/// is exactly \p symbol: the result and the dimension.
std::optional<std::pair<ir::ValueRef, int64_t>> tensorSized(ir::Graph& graph,
                                                            llvm::StringRef symbol) {
  for (ir::Node& node : graph.nodes()) {
    if (!node.isCall())
      continue;
    const ir::Type& type = node.type();
    auto find = [&](const ir::Type& t) -> std::optional<int64_t> {
      if (!t.isTensor())
        return std::nullopt;
      for (auto [d, size] : llvm::enumerate(t.sizes()))
        if (size && size.isSymbol() && size.symbolName() == symbol)
          return int64_t(d);
      return std::nullopt;
    };
    if (type.isSequence()) {
      for (auto [i, element] : llvm::enumerate(type.elements()))
        if (std::optional<int64_t> d = find(element))
          return std::make_pair(ir::ValueRef{&node, unsigned(i)}, *d);
    } else if (std::optional<int64_t> d = find(type)) {
      return std::make_pair(ir::ValueRef{&node, std::nullopt}, *d);
    }
  }
  return std::nullopt;
}

} // namespace

llvm::Error readReturnedSizes(ir::GraphBuilder& builder,
                              llvm::ArrayRef<const ir::Argument*> returned) {
  ir::Graph& graph = builder.graph();
  std::vector<std::string> unbacked;
  for (const ir::Argument* arg : returned)
    arg->forEachSym([&](ir::SymExpr expr) {
      expr.walkSymbols([&](ir::SymExpr symbol) {
        const ir::SymbolDecl* decl = graph.findSymbol(symbol.symbolName());
        if (decl && decl->unbacked && !llvm::is_contained(unbacked, decl->name))
          unbacked.push_back(decl->name);
      });
    });
  for (const std::string& name : unbacked) {
    if (ir::unbackedIntNode(graph, name))
      continue;
    std::optional<std::pair<ir::ValueRef, int64_t>> sized = tensorSized(graph, name);
    if (!sized)
      return captureError("the function returns an int computed from the data-dependent size " +
                          name +
                          ", which no tensor of the graph has as a dimension of its own; return "
                          "the tensor's size instead, or compute the int with torch operations "
                          "and item()");
    auto [ref, dim] = *sized;
    builder.addCall("aten::sym_size.int",
                    {ir::Argument::value(ref.node, ref.index), builder.integer(dim)},
                    ir::Type::integer(graph.context().symbol(name)));
  }
  return llvm::Error::success();
}

} // namespace dync::capture
