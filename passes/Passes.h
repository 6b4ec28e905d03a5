//===- Passes.h - Graph-to-graph transformations ---------------*- C++ -*-===//
//
// Each pass rewrites one graph in place and leaves it verifying; none changes
// what the graph computes or which returned tensors share storage with its
// inputs or with each other. The safety rules each one follows are in
// docs/passes.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

namespace dync::ir {
class Graph;
class Node;
} // namespace dync::ir

namespace dync::transforms {

/// Removes calls whose results are unused and that have no effect to keep
/// (OpTraits::isPure). Inputs, the output, and calls of unknown overloads
/// are kept.
llvm::Error runDeadCodeElimination(ir::Graph& graph);

/// Erases the calls nothing uses, and then those left unused by that, for
/// which \p mayErase holds: dead-code elimination's sweep, for a pass that
/// may remove only calls it knows (fusion, the views it made unused).
void eraseUnusedCalls(ir::Graph& graph, llvm::function_ref<bool(const ir::Node&)> mayErase);

/// Replaces a pure call by an earlier one with the same overload, equal
/// arguments and equal result type, when no write to the storage of its
/// arguments happens between them and neither result is ever written.
llvm::Error runCommonSubexpressionElimination(ir::Graph& graph);

/// Replaces values known at compile time by literals (an `int<s0>` result
/// becomes `s0`) and exact identities by their operand (`expand` to the same
/// type, `mul` by 1, ...). Calls left unused are removed by dead-code
/// elimination, not here.
llvm::Error runConstantFolding(ir::Graph& graph);

/// Replaces an in-place pointwise call on a temporary nothing else can see
/// (`mean(...).add_(eps)`) by its out-of-place twin (`add`), whose result
/// stands for the temporary from then on: writes block fusion and CSE.
llvm::Error runInPlaceToFunctional(ir::Graph& graph);

} // namespace dync::transforms
