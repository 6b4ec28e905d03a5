//===- Pipeline.h - The passes export runs on every graph ------*- C++ -*-===//
#pragma once

#include "llvm/Support/Error.h"

namespace dync::ir {
class Graph;
class Module;
} // namespace dync::ir

namespace dync::transforms {

/// Whether running \p graph records autograd: some input or result of a call
/// requires grad, and its guards do not say grad mode is off. Its ATen calls must then run one by
/// one, as captured, so that autograd records what eager records: kernels compute values only, and
/// rewriting in-place calls or merging calls changes the backward graph.
bool recordsAutograd(const ir::Graph& graph);

/// Cleans \p graph (which \p module holds) before code generation: constant
/// folding, then common-subexpression and dead-code elimination, which
/// remove what folding left unused and merged, then fusion and memory
/// planning; the graph verifies after each step. A graph that
/// recordsAutograd() is left as it is: no pass here keeps autograd's record.
llvm::Error optimizeGraph(ir::Module& module, ir::Graph& graph);

} // namespace dync::transforms
