//===- GraphBuilder.h - Building graphs from capture -----------*- C++ -*-===//
//
// The API the symbolic interpreter builds graphs with: declare the symbols
// sizes are written in, add inputs with their sources, append operator calls
// in program order, set the output. It names values (`%0`, `%1`, ... unless
// given a name) and keeps inputs ahead of calls; it checks nothing else, so
// run the verifier on the finished graph. Every call and output it makes
// gets the location its location source gives (the user's line capture is
// at).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include "llvm/ADT/StringSet.h"

#include <functional>

namespace dync::ir {

class GraphBuilder {
public:
  /// Appends to \p graph, which may already hold nodes.
  explicit GraphBuilder(Graph& graph);

  Graph& graph() const { return graph_; }
  Context& context() const { return graph_.context(); }

  /// Asked for the location of every call and output added from now on
  /// (inputs are reads of the frame and get none); capture
  /// answers with the Python line it is executing and the calls it inlined.
  using LocationSource = std::function<Location()>;
  void setLocationSource(LocationSource source) { locationSource_ = std::move(source); }
  const LocationSource& locationSource() const { return locationSource_; }

  /// Declares symbol \p name with \p range and returns it as an expression.
  SymExpr declareSymbol(llvm::StringRef name, SymbolRange range, bool unbacked = false);
  /// Records an assumption, e.g. `s0 mod 8 == 0`.
  void addRelation(SymExpr lhs, RelationKind kind, SymExpr rhs);

  /// Adds an input read from \p source, after the inputs already there and
  /// before any call. \p name is used as given if free, otherwise made
  /// unique with a suffix.
  Node* addInput(llvm::StringRef name, Type type, llvm::StringRef source);
  /// Appends a call of operator overload \p op; its result has type
  /// \p result. Named \p name if given and free, else the next `%N`.
  Node* addCall(llvm::StringRef op, std::vector<Argument> args, std::vector<KeywordArgument> kwargs,
                Type result, llvm::StringRef name = "");
  Node* addCall(llvm::StringRef op, std::vector<Argument> args, Type result) {
    return addCall(op, std::move(args), {}, std::move(result));
  }
  /// Appends the return of \p result, the function's return value (a
  /// tuple argument for a returned tuple). Call once, last.
  Node* setOutput(Argument result);

  // Shorthands for arguments.
  static Argument use(Node* node, std::optional<unsigned> index = std::nullopt) {
    return Argument::value(node, index);
  }
  Argument integer(int64_t value) const { return Argument::sym(context().constant(value)); }

private:
  std::string uniqueName(llvm::StringRef hint);
  Node* located(Node* node);

  Graph& graph_;
  llvm::StringSet<> names_;
  unsigned nextNumber_ = 0;
  LocationSource locationSource_;
};

} // namespace dync::ir
