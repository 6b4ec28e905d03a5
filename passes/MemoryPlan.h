//===- MemoryPlan.h - Kernel outputs sharing buffers ------------*- C++ -*-===//
//
// Memory planning lets the outputs of kernel calls that the graph does not
// return, and whose lifetimes do not overlap, live in one buffer in turn.
// The plan is part of the IR: a kernel call carries `buffers=[...]`, one
// entry per output, a slot number or `none` (the output gets an allocation
// of its own). Codegen allocates each slot once per graph call, at the
// largest size its members need, and makes each member a view of it
// (docs/kernels.md, "Memory planning").
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <vector>

namespace dync::transforms {

/// The keyword argument of a kernel call that holds its plan.
inline constexpr llvm::StringLiteral kBuffersKeyword = "buffers";

/// The slot of each output of kernel call \p call, in output order; nullopt
/// for an output with an allocation of its own (every output of a call
/// without `buffers=`). Assumes the graph verifies.
std::vector<std::optional<unsigned>> kernelBufferSlots(const ir::Node& call);

/// Assigns slots to the outputs of \p graph's kernel calls that may share:
/// outputs not returned (neither themselves nor any view of them), greedily
/// in graph order, each to the first slot whose previous occupant is no
/// longer live. Slots with one member are dropped, as they save nothing.
/// Replaces any plan the graph had.
llvm::Error runMemoryPlanning(ir::Graph& graph);

/// Checks \p graph's plan against the same lifetimes the pass computes: no
/// slot holds a returned output, and the members of a slot are never live
/// at once. Codegen checks before it trusts a plan, since a wrong one
/// would make kernels overwrite values still in use.
llvm::Error checkMemoryPlan(const ir::Graph& graph);

} // namespace dync::transforms
