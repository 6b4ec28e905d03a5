//===- DataBranches.h - What capture does with decisions on data ---------===//
//
// A decision on tensor data (`if mask.any():`, `if n.item() > 3:`, Python's
// max() of two tensors) has no side capture could know on fake tensors.
// By default capture takes the side the example inputs take, and the graph
// checks, when it runs, that the call takes it too; a call that does not
// runs the program's original code (docs/capture.md, "Decisions on data,
// specialized to the example"). `--data-branches=refuse` stops capture at
// such a decision instead, as torch.export does.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>

namespace dync::capture {

enum class DataBranches { Specialize, Refuse };

/// "specialize" or "refuse", as the command line spells the setting.
inline std::optional<DataBranches> parseDataBranches(llvm::StringRef text) {
  if (text == "specialize")
    return DataBranches::Specialize;
  if (text == "refuse")
    return DataBranches::Refuse;
  return std::nullopt;
}

} // namespace dync::capture

namespace dync::ir {
class Graph;
} // namespace dync::ir

namespace dync::capture {

/// Moves each fall-back check of a decision on data whose condition is
/// computed without random numbers, with the calls computing it, to before
/// the graph's first random operator, so that a call taking the other side
/// falls back before drawing and the graph need not save the generator's
/// state (FallBackChecks.cpp). A check that cannot move (its condition
/// uses a size read from data, or a write in between may reach what it
/// reads) stays where it is: the graph puts the generator's state back
/// before falling back there (codegen/FallBackGenerator.cpp).
llvm::Error runFallBackChecksFirst(ir::Graph& graph);

} // namespace dync::capture
