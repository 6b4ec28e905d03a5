//===- ReturnedSizes.h - Data-dependent sizes the function returns -*- C++ -*-===//
//
// A function may return an int it computed from a data-dependent size
// (`idx = x.nonzero(); return idx, idx.shape[0] * 2`): a value of the
// unbacked symbol `u0`, which no input holds and which no node gives as an
// int, only as a dimension of a tensor. As torch.export does, the graph
// then reads it with a node of its own,
//
//   %1 = aten::sym_size.int(%0, 0) : int<u0>
//
// which the graph returns as it returns item()'s ints (ir/Graph.h,
// outputLeaves), and the rewritten code rebuilds `u0 * 2` from it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Argument.h"
#include "ir/GraphBuilder.h"

#include "llvm/Support/Error.h"

namespace dync::capture {

/// Appends a `sym_size.int` read, through \p builder, for each unbacked
/// symbol \p returned mentions that no call gives as an int; fails, saying
/// so, for one no tensor has as a dimension of its own (only inside a size
/// expression or a stride). The graph's symbols must be declared.
llvm::Error readReturnedSizes(ir::GraphBuilder& builder,
                              llvm::ArrayRef<const ir::Argument*> returned);

} // namespace dync::capture
