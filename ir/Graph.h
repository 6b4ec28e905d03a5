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
// A kernel is a graph too: a group of pointwise and reduction nodes that the
// fusion pass outlined, which codegen compiles into one loop nest. Its inputs
// have no source (the calling graph passes them), and a graph calls it with
// a call node whose operator is `@name`.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Argument.h"
#include "ir/Assumptions.h"
#include "ir/Guard.h"
#include "ir/Location.h"
#include "ir/Type.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ilist.h"
#include "llvm/ADT/ilist_node.h"
#include "llvm/Support/SMLoc.h"

#include <memory>
#include <string>
#include <vector>

namespace dync::ir {

enum class NodeKind : uint8_t { Input, Call, Output };

/// What the rewritten code does to an object that existed before the call,
/// after the graph ran, so the world is left as the Python function left it
/// (docs/capture.md, "Side effects"). The value is one of the output node's
/// arguments, rebuilt as a returned value is.
struct SideEffect {
  enum class Kind : uint8_t {
    /// `target = value`: an attribute (`L['self'].count`) or a global
    /// (`G['calls']`) assigned.
    Set,
    /// `target[:] = value` for a list, `target.clear(); target.update(value)`
    /// for a dict: a container of the caller's mutated in place.
    Fill,
    /// `target.extend(value)`: a list of the caller's the program only
    /// appended to, whose items it never read.
    Extend,
    /// `target.update(value)`: a dict of the caller's the program only
    /// assigned entries of, whose other entries it never read.
    Update,
    /// `tensor.register_hook(fn)` (or `register_post_accumulate_grad_hook`,
    /// hookMethod) on a tensor the graph hands back: a hook autograd runs
    /// in backward, registered before the caller can run it. The value is
    /// the tuple `(tensor, defaults..., cell values...)` of hookFunction.
    Hook,
    /// `target(*args, **kwargs)`, or `target.method(*args, **kwargs)`: a
    /// call into the world that feeds nothing back into the computation
    /// (print, warnings.warn, a logger's level methods), made after the
    /// graph on the real objects. The value is the pair `(args, kwargs)`,
    /// a tuple and a dict with str keys.
    Call
  };
  /// A function a hook registration gives: one read through a source
  /// (`L['self'].scale_grad`), or one the program made (a lambda, a nested
  /// def), found by its module, qualified name and first line, with its
  /// positional defaults and closure cells rebuilt after the graph.
  struct Function {
    /// The source it is read through; empty for a function the program
    /// made.
    std::string source;
    std::string module;
    std::string qualname;
    int64_t line = 0;
    /// Made over the globals of \p module, imported by name, rather than
    /// over the exported function's own (which the rewritten code runs
    /// over): a function another module defines.
    bool imported = false;
    /// How many positional defaults follow the tensor in the value.
    size_t defaults = 0;
    /// Its free variables in co_freevars order: the name, and the source
    /// its cell's contents are read through, or empty when the contents are
    /// the next element of the value.
    std::vector<std::pair<std::string, std::string>> cells;
  };
  Kind kind = Kind::Set;
  /// The object's source (ir/Source.h), as guards spell it; empty for a
  /// hook.
  std::string target;
  /// Hook: `register_hook` or `register_post_accumulate_grad_hook`.
  std::string hookMethod;
  /// Hook: the function registered.
  Function hookFunction;
  /// Call: the method of the object \p target names that is called
  /// (`warning_once`); empty when \p target names the callable itself.
  std::string method;
  /// Call: the line of the exported function the call was made from (the
  /// line that called an inlined function making it), which the replayed
  /// call runs at, so a log record or a warning names it; 0 if unknown.
  int64_t line = 0;
};

/// What a graph is: an entry captured from a Python function, a kernel
/// that entry graphs call, the backward of an autograd.Function that an
/// entry graph's `dync::autograd_function` node attaches to its outputs
/// (ir/AutogradFunction.h), or a subgraph a control-flow node runs
/// (ir/ControlFlow.h).
enum class GraphKind : uint8_t { Entry, Kernel, Backward, Subgraph };

class Module;

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
  /// The same, followed by the side effects the rewritten code replays after
  /// the graph, in order: effect i's value is argument i + 1.
  static std::unique_ptr<Node> output(Argument result,
                                      std::vector<std::pair<SideEffect, Argument>> effects);

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
  /// Call: the operator overload, `namespace::name.overload`, or `@name`
  /// for a call of the module's kernel `name`.
  const std::string& op() const { return target_; }
  /// A call of a kernel: its operator is `@name`.
  bool isKernelCall() const { return isCall() && llvm::StringRef(target_).starts_with("@"); }
  /// The called kernel's name, without `@`; empty unless isKernelCall().
  llvm::StringRef kernelName() const {
    return isKernelCall() ? llvm::StringRef(target_).drop_front() : llvm::StringRef();
  }
  void setTarget(std::string target) { target_ = std::move(target); }

  /// Call: positional arguments. Output: one element, the returned value.
  const std::vector<Argument>& args() const { return args_; }
  std::vector<Argument>& args() { return args_; }
  const std::vector<KeywordArgument>& kwargs() const { return kwargs_; }
  std::vector<KeywordArgument>& kwargs() { return kwargs_; }
  /// Output: the returned value, the first argument.
  const Argument& returnValue() const { return args_.front(); }
  /// Output: the side effects after the graph; effect i's value is
  /// args()[i + 1].
  const std::vector<SideEffect>& sideEffects() const { return effects_; }
  /// Output: appends a side effect and its value.
  void addSideEffect(SideEffect effect, Argument value) {
    effects_.push_back(std::move(effect));
    args_.push_back(std::move(value));
  }

  /// Calls \p fn on every value this node uses, keyword arguments included.
  void forEachUse(llvm::function_ref<void(const ValueRef&)> fn) const;

  /// Where the node was written, when parsed from text (valid while the
  /// SourceMgr that parsed it lives); diagnostics point there.
  llvm::SMLoc loc() const { return loc_; }
  void setLoc(llvm::SMLoc loc) { loc_ = loc; }

  /// The user's Python line that made the node (and the calls it was
  /// inlined through); empty when unknown, as for nodes written by hand.
  /// Passes that replace a node give its replacements its location.
  const Location& location() const { return location_; }
  void setLocation(Location location) { location_ = std::move(location); }

  /// One line of the text form, without indentation or newline; the
  /// location, if any, is appended unless \p withLocation is false.
  void print(llvm::raw_ostream& os, bool withLocation = true) const;

private:
  explicit Node(NodeKind kind) : kind_(kind) {}

  NodeKind kind_;
  std::string name_;
  Type type_;
  std::string target_;
  std::vector<Argument> args_;
  std::vector<KeywordArgument> kwargs_;
  std::vector<SideEffect> effects_;
  llvm::SMLoc loc_;
  Location location_;
};

class Graph {
public:
  using NodeList = llvm::iplist<Node>;

  Graph(Context& ctx, std::string name, GraphKind kind = GraphKind::Entry)
      : ctx_(ctx), name_(std::move(name)), kind_(kind) {}
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  Context& context() const { return ctx_; }
  GraphKind kind() const { return kind_; }
  bool isKernel() const { return kind_ == GraphKind::Kernel; }
  bool isSubgraph() const { return kind_ == GraphKind::Subgraph; }
  bool isBackward() const { return kind_ == GraphKind::Backward; }
  /// The module that created this graph, where its kernel calls resolve;
  /// null for a graph constructed on its own.
  Module* module() const { return module_; }

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
  /// \p withLocations false leaves the nodes' locations out, for a text
  /// that names what the graph computes only (a kernel's cache key).
  void print(llvm::raw_ostream& os, bool withLocations = true) const;

private:
  friend class Module;

  Context& ctx_;
  std::string name_;
  GraphKind kind_;
  Module* module_ = nullptr;
  NodeList nodes_;
  std::vector<SymbolDecl> symbols_;
  std::vector<Relation> relations_;
  GuardSet guards_;
  llvm::SMLoc loc_;
};

/// The tensor values in \p graph's returned value, then in the values of its
/// side effects, depth-first, left to right: the results a compiled graph
/// function returns, in order. A float or bool value a call computes is one
/// too, returned as a 0-dim float64 or bool tensor.
/// Last come the data-dependent ints the returned value mentions (`return
/// (%3, u0)` with `%2 = ...: int<u0>`), each as the node computing it,
/// returned as a 0-dim int64 tensor.
std::vector<ValueRef> outputLeaves(const Graph& graph);

/// The first call of \p graph whose result is `int<symbol>`, if any: where
/// a data-dependent int (item() of an integer tensor) is computed.
const Node* unbackedIntNode(const Graph& graph, llvm::StringRef symbol);

/// The type a call of \p kernel has: the returned tensor's type, or a tuple
/// of the returned tensors' types for `return (%a, %b)`. Null if the kernel
/// has no return or returns something other than tensor values.
std::optional<Type> kernelResultType(const Graph& kernel);

/// The graphs of one `.dync` file, or of one captured program: entry graphs
/// and the kernels they call. The two share one namespace.
class Module {
public:
  explicit Module(Context& ctx) : ctx_(ctx) {}

  Context& context() const { return ctx_; }
  /// Entry graphs, in the order they were added.
  Graph& addGraph(std::string name);
  llvm::ArrayRef<std::unique_ptr<Graph>> graphs() const { return graphs_; }
  Graph* findGraph(llvm::StringRef name) const;

  /// Kernels (name without `@`), in the order they were added.
  Graph& addKernel(std::string name);
  llvm::ArrayRef<std::unique_ptr<Graph>> kernels() const { return kernels_; }
  Graph* findKernel(llvm::StringRef name) const;
  /// Backward graphs of autograd.Functions (ir/AutogradFunction.h), in the
  /// order they were added; same namespace as graphs and kernels.
  Graph& addBackward(std::string name);
  llvm::ArrayRef<std::unique_ptr<Graph>> backwards() const { return backwards_; }
  Graph* findBackward(llvm::StringRef name) const;
  /// \p base, or `base.N` for the first N that no graph, kernel or backward
  /// graph is named yet.
  std::string freshName(llvm::StringRef base) const;

  /// A name `k<N>` no graph or kernel has yet, N counting up from the
  /// number of kernels: `k0`, `k1`, ... for kernels the fusion pass adds.
  std::string freshKernelName() const;

  /// Subgraphs (name without `@`), in the order they were added.
  Graph& addSubgraph(std::string name);
  llvm::ArrayRef<std::unique_ptr<Graph>> subgraphs() const { return subgraphs_; }
  Graph* findSubgraph(llvm::StringRef name) const;
  /// Destroys \p subgraph (a capture that failed); nothing may call it.
  void eraseSubgraph(const Graph& subgraph);
  /// Whether a graph, kernel, backward graph or subgraph is named \p name.
  bool hasName(llvm::StringRef name) const {
    return findGraph(name) || findKernel(name) || findBackward(name) || findSubgraph(name);
  }

  /// Kernels first, then backward graphs, then subgraphs, then entry graphs
  /// each followed by its guards, in the order they were added, a blank
  /// line between any two.
  void print(llvm::raw_ostream& os) const;

private:
  Context& ctx_;
  std::vector<std::unique_ptr<Graph>> graphs_;
  std::vector<std::unique_ptr<Graph>> kernels_;
  std::vector<std::unique_ptr<Graph>> subgraphs_;
  std::vector<std::unique_ptr<Graph>> backwards_;
};

} // namespace dync::ir
