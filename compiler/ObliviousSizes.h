//===- ObliviousSizes.h - One graph for sizes torch specializes -*- C++ -*-===//
//
// torch assumes sizes 0 and 1 away: a symbol's range starts at 2, and checks
// such as `size == 1` in broadcasting or contiguity are decided as if the
// size were larger. Export therefore captures a declared size 1 apart
// (RangeSpecializations.h). Most programs compute the same at 1 as the
// general graph does there; torch.export's size-oblivious mode assumes so
// without checking, which is wrong where a decision flips the result (a
// `squeeze` of the dimension). Here the assumption is proved instead: the
// graph captured at 1 is compared with the general graph with the symbol
// set to 1, node by node, guards included. Where they are the same program,
// the general graph's range takes the size in and the specialization is
// dropped; where they differ, the specialization stays and the first
// difference, with its line, says why (docs/capture.md, "Sizes torch
// specializes, proved size-oblivious").
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/RangeSpecializations.h"
#include "ir/Graph.h"

#include "llvm/ADT/ArrayRef.h"

#include <optional>
#include <string>
#include <vector>

namespace dync::compiler {

/// One graph of an entry's variant (inference, `$grad`, `$frozen`), with
/// the sizes it was captured at.
struct CapturedAt {
  const ir::Graph* graph;
  SizePoint point;
};

/// A graph that serves more of its ranges: each symbol of \p widened, whose
/// range started at size + 1, now starts at the size of \p absorbed's
/// point; the graphs \p absorbed lists are the same program there.
struct SizeFold {
  size_t into;
  std::vector<std::string> widened;
  std::vector<size_t> absorbed;
};

/// A size captured apart that stays apart: the graph \p special captured at
/// \p symbol = \p size is not \p general's graph there, for \p why (the
/// first difference, with its location).
struct KeptApart {
  size_t general;
  size_t special;
  std::string symbol;
  int64_t size;
  std::string why;
};

struct FoldPlan {
  std::vector<SizeFold> folds;
  std::vector<KeptApart> kept;
};

/// Which graphs of \p family (one variant of one entry, in capture order)
/// serve sizes another was captured apart at. A graph A takes the sizes
/// s - 1 of a set W of its symbols (s the start of each one's range) when,
/// for every non-empty part U of W, a graph captured at A's point with U
/// at those sizes is A with U set to them: then every point of the widened
/// box runs a program proved equal to what torch captures there.
FoldPlan planSizeFolds(llvm::ArrayRef<CapturedAt> family);

/// \p graph with the symbols of \p sizes set to them, in rangeFreeText's
/// form, or the reason it does not serve them (a relation fails there).
/// Exposed for the unit tests.
llvm::Expected<std::string> rangeFreeTextAt(const ir::Graph& graph, const SizePoint& sizes);

} // namespace dync::compiler
