//===- SubgraphCapture.h - A function's calls captured as a subgraph -*- C++ -*-===//
//
// What the operators whose functions run only when the graph runs share
// (torch.cond on a tensor predicate, TensorCond.cpp; while_loop on one,
// TensorWhileLoop.cpp): a Python function called on fake tensors with its
// calls recorded into a new subgraph of the module (ir/ControlFlow.h), every
// tensor of the enclosing graph it uses becoming an input, and the
// subgraph's inputs then put in the order the node passes its operands.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/Value.h"
#include "frontend/capture/ValueTrees.h"
#include "ir/Graph.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <string>
#include <vector>

namespace dync::capture {

class BuiltinContext;

/// One function as captured: its subgraph, the pytree it returned, and the
/// value of the enclosing graph each input of the subgraph stands for.
struct CapturedSubgraph {
  ir::Graph* graph = nullptr;
  TreeShape shape;
  std::vector<ValuePtr> leaves;
  std::vector<ir::ValueRef> outer;
};

/// What a caller does inside the subgraph around the function's call:
/// \p arguments, when set, makes the function's arguments from \p args
/// (recording what it calls into the subgraph); \p results, when set,
/// changes the leaves the function returned before they are checked.
struct SubgraphAdapters {
  std::function<llvm::Expected<std::vector<ValuePtr>>(std::vector<ValuePtr>)> arguments;
  std::function<llvm::Error(std::vector<ValuePtr>&)> results;
};

/// Calls \p fn on \p args without side effects, its calls recorded into the
/// new subgraph \p name of \p module, which returns the tensors of its
/// result (a pytree of tensors and constants). \p what names the function
/// in errors ("torch.cond's true branch"), \p op the operator
/// ("torch.cond") and \p parts its functions ("branches"); \p effectRule
/// says why the function may change nothing that existed before it (see
/// BuiltinContext::callWithoutSideEffects). Fails, leaving
/// no subgraph, when the function writes one of its inputs in place or
/// returns one of them (or a view of one), as torch's operators refuse.
llvm::Expected<CapturedSubgraph> captureSubgraph(BuiltinContext& interp, ir::Module& module,
                                                 const std::string& name, const ValuePtr& fn,
                                                 std::vector<ValuePtr> args, llvm::StringRef what,
                                                 llvm::StringRef op, llvm::StringRef parts,
                                                 llvm::StringRef effectRule,
                                                 const SubgraphAdapters& adapters = {});

/// Gives \p subgraph's inputs the order of \p want, adding an input for
/// each value it does not use; \p have is the value each input stands for
/// now.
void arrangeSubgraphInputs(ir::Graph& subgraph, llvm::ArrayRef<ir::ValueRef> have,
                           llvm::ArrayRef<ir::ValueRef> want);

/// `<graph>.<kind><N>`, N the first number for which no subgraph named
/// that base followed by `.` and one of \p parts is taken in \p module
/// (`forward.cond0` for the subgraphs `forward.cond0.true` and `.false`).
std::string freshSubgraphBase(const ir::Module& module, llvm::StringRef graph, llvm::StringRef kind,
                              llvm::ArrayRef<llvm::StringRef> parts);

/// A fresh fake tensor like \p leaf (a tensor a subgraph returned), standing
/// for \p ref, the node's result the program sees, of type \p type.
llvm::Expected<ValuePtr> freshNodeResult(BuiltinContext& interp, const ValuePtr& leaf,
                                         const ir::Type& type, ir::ValueRef ref);

/// The values \p refs name, as values (fake tensors).
llvm::Expected<std::vector<ValuePtr>> valuesOfRefs(BuiltinContext& interp,
                                                   llvm::ArrayRef<ir::ValueRef> refs);

} // namespace dync::capture
