//===- ControlFlow.h - torch.cond as a node over two subgraphs -*- C++ -*-===//
//
// `torch.cond(pred, true_fn, false_fn, operands)` on a tensor predicate
// decides which branch runs only when the graph runs, so the graph holds
// both: each branch is a subgraph of the module (GraphKind::Subgraph), and
// one call node runs the one the predicate picks:
//
//   subgraph @f.cond0.true(%x: tensor<f32, [4]>, %w: tensor<f32, [4]>) {
//     %0 = aten::sin.default(%x) : tensor<f32, [4]>
//     %1 = aten::mul.Tensor(%0, %w) : tensor<f32, [4]>
//     return (%1,)
//   }
//   ...
//   %3 = higher_order::cond(%2, "f.cond0.true", "f.cond0.false", %x, %w)
//          : tuple<tensor<f32, [4]>>
//
// The first argument is a bool value (the predicate as `bool(pred)` reads
// it, `aten::is_nonzero.default`), then the two subgraphs' names, then the
// operands, which both subgraphs take as their inputs, in order. The call's
// type is the tuple of the tensors both return (requires_grad aside: a
// result requires grad when either branch's does, or an operand does). Passes know nothing of the
// operator (it has no OpTraits), so they treat it as opaque: never removed,
// merged or moved across, its operands possibly written and aliased.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/Twine.h"

#include <optional>

namespace dync::ir {

/// The operator of a cond node, as torch.export names it.
inline constexpr llvm::StringLiteral kCondOperator = "higher_order::cond";

/// Whether \p node is a call of kCondOperator.
bool isCondCall(const Node& node);

/// A well-formed cond node's parts (the verifier checks the form).
const Argument& condPredicate(const Node& cond);
/// The name of the subgraph run when the predicate is \p taken.
llvm::StringRef condBranchName(const Node& cond, bool taken);
llvm::ArrayRef<Argument> condOperands(const Node& cond);

/// The type a call of \p subgraph has: the tuple of the returned tensors'
/// types. None if it returns anything but a tuple of tensor values.
std::optional<Type> subgraphResultType(const Graph& subgraph);

/// The names of the subgraphs \p node runs: a cond node's two branches, a
/// while_loop node's cond and body (ir/WhileLoop.h); none for other nodes
/// or where an argument is not a string.
std::vector<llvm::StringRef> calledSubgraphNames(const Node& node);

/// The subgraphs \p graph's cond and while_loop nodes run, and theirs,
/// each once, a subgraph before the subgraphs that run it (so in an order
/// a reader meets each before its calls).
std::vector<const Graph*> condSubgraphs(const Graph& graph);

/// Calls \p report with each rule \p cond, a cond node of \p caller, breaks:
/// its arguments' forms, the subgraphs it names (they exist, take its
/// operands' types and return its type), and the symbols they mention
/// (declared by the caller).
void checkCondCall(const Graph& caller, const Node& cond,
                   llvm::function_ref<void(const llvm::Twine&)> report);

/// Calls \p report with each rule subgraph \p subgraph breaks at its
/// output: it must return a tuple of tensor values.
void checkSubgraphResult(const Graph& subgraph,
                         llvm::function_ref<void(const llvm::Twine&)> report);

} // namespace dync::ir
