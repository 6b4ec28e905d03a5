//===- Printer.cpp - Canonical text form of graphs ------------------------===//
//
// One spelling per graph, so print -> parse -> print is the identity and
// FileCheck patterns stay stable:
//
//   graph @name(%x: <type> = <source>,
//               %w: <type> = <source>)
//       symbols { s0: [2, 1024] }
//       relations { s0 mod 8 == 0 } {
//     %0 = aten::op.overload(<args>, kw=<arg>) : <type>
//     return <arg>
//     after set <source> = <arg>
//   }
//
// Any node may end with its location, `loc("model.py":12:16)` (Location.h).
// Inputs are aligned under the first; empty symbol and relation blocks are
// left out. A kernel is written the same way after `kernel`, its inputs
// without `= <source>`, and so are an autograd.Function's backward graph
// after `backward` and a subgraph after `subgraph`. Module::print writes the
// kernels first, then backward graphs and subgraphs, so a reader meets each
// before the calls of it, then the entry graphs, each
// followed by its guards block (GuardSet::print, in Guard.cpp).
//
//===----------------------------------------------------------------------===//
#include "ir/Graph.h"
#include "ir/Syntax.h"

namespace dync::ir {

static void printGraphName(llvm::raw_ostream& os, llvm::StringRef name) {
  os << '@';
  if (isBareGraphName(name))
    os << name;
  else
    printQuoted(os, name);
}

/// A hook registration after the graph; \p value is the tuple `(tensor,
/// defaults..., cell values...)` (SideEffect::Kind::Hook).
/// `after call <target> [method <name>] line <n> (<args>) {<kwargs>}`:
/// the value is the pair (args, kwargs), printed as its two parts.
static void printCallEffect(llvm::raw_ostream& os, const SideEffect& effect,
                            const Argument& value) {
  os << "  after call " << effect.target;
  if (!effect.method.empty())
    os << " method " << effect.method;
  os << " line " << effect.line << ' ';
  if (value.kind() == Argument::Kind::Tuple && value.elements().size() == 2) {
    value.elements()[0].print(os);
    os << ' ';
    value.elements()[1].print(os);
  } else {
    os << "<malformed>";
  }
  os << '\n';
}

static void printHookEffect(llvm::raw_ostream& os, const SideEffect& effect,
                            const Argument& value) {
  const SideEffect::Function& function = effect.hookFunction;
  bool tuple = value.kind() == Argument::Kind::Tuple && !value.elements().empty();
  auto element = [&](size_t index) {
    if (tuple && index < value.elements().size())
      value.elements()[index].print(os);
    else
      os << "<missing>";
  };
  os << "  after " << effect.hookMethod << ' ';
  element(0);
  if (!function.source.empty()) {
    os << " from " << function.source << '\n';
    return;
  }
  os << (function.imported ? " with imported function " : " with function ");
  printQuoted(os, function.module + ":" + function.qualname);
  os << " line " << function.line;
  size_t next = 1;
  if (function.defaults) {
    os << " defaults (";
    for (size_t i = 0; i < function.defaults; ++i) {
      if (i)
        os << ", ";
      element(next++);
    }
    os << ')';
  }
  if (!function.cells.empty()) {
    os << " cells (";
    for (auto [i, cell] : llvm::enumerate(function.cells)) {
      if (i)
        os << ", ";
      os << cell.first;
      if (!cell.second.empty()) {
        os << ": " << cell.second;
      } else {
        os << " = ";
        element(next++);
      }
    }
    os << ')';
  }
  os << '\n';
}

static void printArguments(llvm::raw_ostream& os, const Node& node) {
  os << '(';
  llvm::interleaveComma(node.args(), os, [&](const Argument& arg) { arg.print(os); });
  for (auto [i, kwarg] : llvm::enumerate(node.kwargs())) {
    if (i > 0 || !node.args().empty())
      os << ", ";
    os << kwarg.name << '=';
    kwarg.value.print(os);
  }
  os << ')';
}

void Node::print(llvm::raw_ostream& os, bool withLocation) const {
  switch (kind_) {
  case NodeKind::Input:
    // A kernel's inputs have no source.
    os << '%' << name_ << ": " << type_;
    if (!target_.empty())
      os << " = " << target_;
    break;
  case NodeKind::Call:
    os << '%' << name_ << " = ";
    if (isKernelCall())
      printGraphName(os, kernelName());
    else
      os << target_;
    printArguments(os, *this);
    os << " : " << type_;
    break;
  case NodeKind::Output:
    // The one returned value, as written: `return %3`, `return (%3,)`.
    os << "return ";
    // Side effects' values follow on lines of their own (Graph::print).
    llvm::interleaveComma(llvm::ArrayRef(args_).take_front(args_.size() - effects_.size()), os,
                          [&](const Argument& arg) { arg.print(os); });
    break;
  }
  // The user's line, last: `... : tensor<f32, [8]> loc("model.py":12:16)`.
  if (withLocation && !location_.empty()) {
    os << ' ';
    location_.print(os);
  }
}

void Graph::print(llvm::raw_ostream& os, bool withLocations) const {
  std::string header;
  llvm::raw_string_ostream headerOs(header);
  headerOs << (isKernel()     ? "kernel "
               : isBackward() ? "backward "
               : isSubgraph() ? "subgraph "
                              : "graph ");
  printGraphName(headerOs, name_);
  headerOs << '(';
  os << header;

  std::string indent(header.size(), ' ');
  bool first = true;
  for (const Node& input : inputs()) {
    if (!first)
      os << ",\n" << indent;
    first = false;
    input.print(os, withLocations);
  }
  os << ')';

  if (!symbols_.empty()) {
    os << "\n    symbols { ";
    llvm::interleaveComma(symbols_, os, [&](const SymbolDecl& decl) {
      os << decl.name << ": ";
      decl.range.print(os);
      if (decl.unbacked)
        os << " unbacked";
    });
    os << " }";
  }
  if (!relations_.empty()) {
    os << "\n    relations { ";
    llvm::interleaveComma(relations_, os, [&](const Relation& r) { r.print(os); });
    os << " }";
  }
  os << " {\n";
  for (const Node& node : nodes_) {
    if (node.isInput())
      continue;
    os << "  ";
    node.print(os, withLocations);
    os << '\n';
    // Side effects after the graph, one line each:
    //   after set L['self'].count = s0
    //   after fill L['xs'] = [%3, 1]
    //   after extend L['self'].history = [%4]
    //   after update L['self'].outputs = {"mu": %5}
    //   after register_hook %5 from L['self'].scale_grad
    //   after register_hook %5 with function "model:Net.forward.<locals>.<lambda>"
    //       line 12 defaults (0.5) cells (self: L['self'], k = %7)
    //   after call M['builtins'].print line 9 ("loss", %3) {"sep": ":"}
    //   after call G['logger'] method warning_once line 14 ("slow path",) {}
    if (node.isOutput())
      for (auto [i, effect] : llvm::enumerate(node.sideEffects())) {
        if (effect.kind == SideEffect::Kind::Hook) {
          printHookEffect(os, effect, node.args()[i + 1]);
          continue;
        }
        if (effect.kind == SideEffect::Kind::Call) {
          printCallEffect(os, effect, node.args()[i + 1]);
          continue;
        }
        os << "  after "
           << (effect.kind == SideEffect::Kind::Set      ? "set "
               : effect.kind == SideEffect::Kind::Fill   ? "fill "
               : effect.kind == SideEffect::Kind::Update ? "update "
                                                         : "extend ")
           << effect.target << " = ";
        node.args()[i + 1].print(os);
        os << '\n';
      }
  }
  os << "}\n";
}

void Module::print(llvm::raw_ostream& os) const {
  bool first = true;
  auto separate = [&] {
    if (!first)
      os << '\n';
    first = false;
  };
  for (const std::unique_ptr<Graph>& kernel : kernels_) {
    separate();
    kernel->print(os);
  }
  for (const std::unique_ptr<Graph>& backward : backwards_) {
    separate();
    backward->print(os);
  }
  for (const std::unique_ptr<Graph>& subgraph : subgraphs_) {
    separate();
    subgraph->print(os);
  }
  for (const std::unique_ptr<Graph>& graph : graphs_) {
    separate();
    graph->print(os);
    // A graph's guards follow it; a block with neither guards nor local
    // names says nothing and is left out.
    const GuardSet& guards = graph->guards();
    if (!guards.empty() || !guards.localNames().empty())
      guards.print(os, graph->name());
  }
}

} // namespace dync::ir
