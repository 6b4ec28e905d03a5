//===- KernelSchedule.h - The loop nest a kernel runs in --------*- C++ -*-===//
//
// A kernel computes all its nodes in one loop nest over an iteration space
// S: the input shape of its reductions (all reduce the same dimensions of
// equally shaped values), or the shape of its largest output when it has
// none. Kept dimensions are the outer loops, nested as the first output is
// laid out in memory (largest stride outermost), the outermost split across
// threads; reduced dimensions are the inner loops, run once per reduction
// and once more for outputs that span them. Every tensor value is located
// in S by which loop dimension each of its dimensions follows (or none, for
// a broadcast dimension of size 1), worked out from the IR types alone.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "ir/kernel/ElementOps.h"
#include "ir/kernel/KernelViews.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

namespace dync::codegen {

/// For each dimension of a value, the loop dimension it follows, or -1 for
/// a broadcast dimension (constant size 1, or a reduced dimension kept as
/// size 1).
using DimMap = llvm::SmallVector<int, 4>;

struct KernelSchedule {
  /// The sizes of the iteration space S, one per loop dimension.
  llvm::SmallVector<ir::SymExpr, 4> loopSizes;
  /// Loop dimensions not reduced, outermost first: in the order of the first
  /// output's strides, so the innermost loop walks it contiguously.
  llvm::SmallVector<unsigned, 4> keptDims;
  /// Loop dimensions the reductions reduce, outermost first.
  llvm::SmallVector<unsigned, 4> reducedDims;
  /// Each call node's element description and where its result lies in S.
  llvm::DenseMap<const ir::Node*, ir::ElementDescription> elements;
  llvm::DenseMap<const ir::Node*, DimMap> dimMaps;
  /// The returned values, in buffer order.
  llvm::SmallVector<const ir::Node*, 2> outputs;
  /// The kernel's views of its inputs (KernelViews.h): read from memory
  /// like the inputs themselves, at the offset each holds from its root.
  llvm::DenseMap<const ir::Node*, ir::ViewedBase> views;

  /// Whether \p node is read from memory rather than computed: an input or
  /// a view of one.
  bool isLoaded(const ir::Node& node) const { return node.isInput() || views.contains(&node); }

  /// Where a kernel input (or view) read by \p user lies in S: right-aligned with the
  /// user's result, as broadcasting aligns it (a reduction's operand aligns
  /// with S itself). Fails if a dimension of the input matches none.
  llvm::Expected<DimMap> inputDimMap(const ir::Node& input, const ir::Node& user) const;
  /// Whether a value with \p map varies along a reduced loop dimension.
  bool spansReduced(const DimMap& map) const;
};

/// Plans \p kernel's loop nest; an error names the node that does not fit.
llvm::Expected<KernelSchedule> scheduleKernel(const ir::Graph& kernel);

} // namespace dync::codegen
