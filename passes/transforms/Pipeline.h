//===- Pipeline.h - The passes export runs on every graph ------*- C++ -*-===//
#pragma once

#include "llvm/Support/Error.h"

namespace dync::ir {
class Graph;
class Module;
} // namespace dync::ir

namespace dync::transforms {

/// Cleans \p graph (which \p module holds) before code generation: constant
/// folding, then common-subexpression and dead-code elimination, which
/// remove what folding left unused and merged. Later stages (fusion) append
/// here; the graph verifies after each step.
llvm::Error optimizeGraph(ir::Module& module, ir::Graph& graph);

} // namespace dync::transforms
