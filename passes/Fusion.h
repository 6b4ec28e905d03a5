//===- Fusion.h - Outlining pointwise and reduction groups into kernels -*- C++ -*-===//
//
// The fusion pass groups nodes that kernel codegen computes (kernelOpClass
// is Pointwise or Reduction) into kernels of the module, and replaces each
// group by one call of its kernel, so that intermediates stay in registers
// instead of round-tripping through memory between ATen calls. The legality
// rules and their reasons are in docs/fusion.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include "llvm/Support/Error.h"

namespace dync::transforms {

/// Outlines the fusible groups of \p graph, an entry graph of \p module, into
/// new kernels of \p module named `k0`, `k1`, ... (the first names free).
/// Leaves the graph unchanged where nothing is worth fusing.
llvm::Error runFusion(ir::Module& module, ir::Graph& graph);

/// runFusion on every entry graph of \p module.
llvm::Error runFusion(ir::Module& module);

} // namespace dync::transforms
