//===- Graph.h - Graphs of ATen operator calls -----------------*- C++ -*-===//
//
// A graph is what capture produces for one Python function: an ordered list
// of nodes in SSA form, as in torch.fx. `input` nodes come first and name the
// frame source their value is read from (decision 4); `call` nodes apply an
// ATen operator overload to arguments; one `output` node, last, holds the
// value the Python function returns. The graph also owns its symbols, with
// their ranges, and the relations between them that its types were computed
// under.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "passes/ir/Argument.h"
#include "passes/ir/Assumptions.h"
#include "passes/ir/Guard.h"
#include "passes/ir/Type.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ilist.h"
#include "llvm/ADT/ilist_node.h"
#include "llvm/Support/SMLoc.h"

#include <memory>
#include <string>
#include <vector>

namespace dync::ir {

enum class NodeKind : uint8_t { Input, Call, Output };

class Node : public llvm::ilist_node<Node> {
public:
  /// An input read from \p source, e.g. `L['x']` or `L['self'].fc.weight`.
  static std::unique_ptr<Node> input(std::string name, Type type, std::string source);
  /// A call of the operator overload \p op (`aten::addmm.default`).
  static std::unique_ptr<Node> call(std::string name, std::string op, std::vector<Argument> args,
                                    std::vector<KeywordArgument> kwargs, Type type);
  /// The terminator, holding the one value the Python function returns:
  /// `%3`, or a tuple or list (`(%3,)`, `(%3, [%4, none], 2*s0)`), so that
  /// `return x` and `return (x,)` stay different.
  static std::unique_ptr<Node> output(Argument result);

  NodeKind kind() const { return kind_; }
  bool isInput() const { return kind_ == NodeKind::Input; }
  bool isCall() const { return kind_ == NodeKind::Call; }
  bool isOutput() const { return kind_ == NodeKind::Output; }

  /// The SSA name, without `%`; empty for the output.
  const std::string& name() const { return name_; }
  void setName(std::string name) { name_ = std::move(name); }

  /// The result type; `none` for the output and for calls returning nothing.
  const Type& type() const { return type_; }
  void setType(Type type) { type_ = std::move(type); }
  /// The type a use denotes: the whole result, or element \p index of it.
  /// Null if the index is out of range or the result is not a sequence.
  const Type* resultType(std::optional<unsigned> index) const;

  /// Input: where the value comes from in the Python frame.
  const std::string& source() const { return target_; }
  /// Call: the operator overload, `namespace::name.overload`.
  const std::string& op() const { return target_; }
  void setTarget(std::string target) { target_ = std::move(target); }

  /// Call: positional arguments. Output: one element, the returned value.
  const std::vector<Argument>& args() const { return args_; }
  std::vector<Argument>& args() { return args_; }
  const std::vector<KeywordArgument>& kwargs() const { return kwargs_; }
  std::vector<KeywordArgument>& kwargs() { return kwargs_; }
  /// Output: the returned value. A verified graph's output has exactly one.
  const Argument& returnValue() const { return args_.front(); }

  /// Calls \p fn on every value this node uses, keyword arguments included.
  void forEachUse(llvm::function_ref<void(const ValueRef&)> fn) const;

  /// Where the node was written, when parsed from text (valid while the
  /// SourceMgr that parsed it lives); diagnostics point there.
  llvm::SMLoc loc() const { return loc_; }
  void setLoc(llvm::SMLoc loc) { loc_ = loc; }

  /// One line of the text form, without indentation or newline.
  void print(llvm::raw_ostream& os) const;

private:
  explicit Node(NodeKind kind) : kind_(kind) {}

  NodeKind kind_;
  std::string name_;
  Type type_;
  std::string target_;
  std::vector<Argument> args_;
  std::vector<KeywordArgument> kwargs_;
  llvm::SMLoc loc_;
};

class Graph {
public:
  using NodeList = llvm::iplist<Node>;

  Graph(Context& ctx, std::string name) : ctx_(ctx), name_(std::move(name)) {}
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  Context& context() const { return ctx_; }
  /// The Python function's qualified name, e.g. `MLP.forward`.
  const std::string& name() const { return name_; }
  void setName(std::string name) { name_ = std::move(name); }

  NodeList& nodes() { return nodes_; }
  const NodeList& nodes() const { return nodes_; }
  /// Takes ownership of \p node and inserts it before \p before.
  Node* insert(NodeList::iterator before, std::unique_ptr<Node> node);
  Node* append(std::unique_ptr<Node> node) { return insert(nodes_.end(), std::move(node)); }
  /// Unlinks and destroys \p node; uses of it must be gone first.
  void erase(Node* node) { nodes_.erase(node->getIterator()); }

  auto inputs() const {
    return llvm::make_filter_range(nodes_, [](const Node& n) { return n.isInput(); });
  }
  /// The last node, if it is the output.
  const Node* output() const;

  std::vector<SymbolDecl>& symbols() { return symbols_; }
  const std::vector<SymbolDecl>& symbols() const { return symbols_; }
  const SymbolDecl* findSymbol(llvm::StringRef name) const;
  std::vector<Relation>& relations() { return relations_; }
  const std::vector<Relation>& relations() const { return relations_; }
  /// What the graph assumed about the frame it was captured in; empty for
  /// graphs written without a guards block.
  GuardSet& guards() { return guards_; }
  const GuardSet& guards() const { return guards_; }

  /// Where `graph` was written, when parsed from text.
  llvm::SMLoc loc() const { return loc_; }
  void setLoc(llvm::SMLoc loc) { loc_ = loc; }

  /// The canonical text form, which the parser reads back unchanged.
  void print(llvm::raw_ostream& os) const;

private:
  Context& ctx_;
  std::string name_;
  NodeList nodes_;
  std::vector<SymbolDecl> symbols_;
  std::vector<Relation> relations_;
  GuardSet guards_;
  llvm::SMLoc loc_;
};

/// The tensor values in \p graph's returned value, depth-first, left to
/// right: the results a compiled graph function returns, in order.
std::vector<ValueRef> outputLeaves(const Graph& graph);

/// The graphs of one `.dync` file, or of one captured program.
class Module {
public:
  explicit Module(Context& ctx) : ctx_(ctx) {}

  Context& context() const { return ctx_; }
  Graph& addGraph(std::string name);
  llvm::ArrayRef<std::unique_ptr<Graph>> graphs() const { return graphs_; }
  Graph* findGraph(llvm::StringRef name) const;

  /// Graphs in order, a blank line between them.
  void print(llvm::raw_ostream& os) const;

private:
  Context& ctx_;
  std::vector<std::unique_ptr<Graph>> graphs_;
};

} // namespace dync::ir
