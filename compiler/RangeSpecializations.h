//===- RangeSpecializations.h - Sizes a graph leaves out of its ranges ----===//
//
// A graph captured for `--dynamic` ranges serves the sizes its symbols'
// ranges and relations admit. torch assumes sizes 0 and 1 away, and some
// programs decide things about one size (a slice that covers a whole buffer
// is contiguous), so a graph may leave single sizes of a declared range out;
// the artifact then holds a specialization captured at each such size
// (docs/capture.md, "Specializations of a declared range").
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/DynamicSpec.h"
#include "ir/Graph.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dync::compiler {

/// Sizes to capture a specialization at, by symbol.
using SizePoint = std::map<std::string, int64_t>;

/// One size of a declared range that a graph does not serve.
struct UncoveredSize {
  /// Where to capture next: the graph's own sizes with this one added.
  SizePoint point;
  /// The --dynamic text that declared the range, and why the graph leaves
  /// the size out ("torch specializes sizes 0 and 1", "the graph assumes
  /// seq != 32").
  std::string spec;
  std::string symbol;
  int64_t size = 0;
  std::string why;
  /// A size torch specializes (0 or 1): the graph captured there may turn
  /// out to be the general graph there (ObliviousSizes.h).
  bool torchSpecializes = false;
  /// One of several sizes a relation over one symbol leaves out (`n == 6
  /// or n mod 4 == 0`, `(n + 3) floordiv 4 != 1`): the graph captured at
  /// the first of them usually serves the others, so they are captured one
  /// at a time.
  bool oneOfMany = false;
  /// Found by walking the declared ranges (unservedPoints), not by a graph:
  /// no graph made so far serves it, and none says why.
  bool gap = false;
};

/// The single sizes of \p specs' declared ranges that \p graph, captured at
/// \p at, leaves out: declared sizes 0 and 1 below its symbol's range,
/// the first size past each boundary at which the program cut the declared
/// range (`batch < 16`), and constants c of relations `symbol != c` inside
/// the declared range.
std::vector<UncoveredSize> uncoveredSizes(const ir::Graph& graph,
                                          const std::vector<capture::DynamicSpec>& specs,
                                          const SizePoint& at);

/// Whether \p graph, captured at \p capturedAt, serves the sizes of
/// \p point: each is in its symbol's range and no `symbol != size`
/// relation leaves it out, or the symbol is pinned to it. Symbols \p point
/// does not name are not checked.
bool servesPoint(const ir::Graph& graph, const SizePoint& capturedAt, const SizePoint& point);

/// One graph an entry's artifact holds for its ranges, with the sizes it
/// was captured at.
using GraphAt = std::pair<const ir::Graph*, SizePoint>;

/// The points of \p specs' declared ranges (every symbol they declare, each
/// over its declared range) that none of \p graphs serves; none when a
/// range is open or the ranges hold more than 65536 points, which are not
/// enumerated.
std::optional<std::vector<SizePoint>>
unservedPoints(const std::vector<GraphAt>& graphs, const std::vector<capture::DynamicSpec>& specs);

/// \p points (of the same symbols) in a few words: grouped by the sizes of
/// all symbols but the last, whose sizes are listed with runs written
/// `9..15` (`b = 1, s in {3, 6, 9..15}; b = 2, s in {3}`); at most
/// \p maxGroups groups, then how many points are left.
std::string describePoints(const std::vector<SizePoint>& points, size_t maxGroups = 8);

/// The text of \p graph and of its guards without the graph's name and its
/// symbols' ranges: two graphs of one entry with the same text are the same
/// program over different parts of the declared ranges.
std::string rangeFreeText(const ir::Graph& graph);

/// One symbol's range after merging two graphs that differ only there.
struct MergedRange {
  std::string symbol;
  ir::SymbolRange range;
  /// `batch in [2, 15] and [16, 64]`, for the note.
  std::string what;
};

/// When \p earlier and \p later (of equal rangeFreeText) declare the same
/// symbols with equal ranges but one, whose two ranges meet or overlap,
/// that symbol with the union of its ranges: one graph serves both.
std::optional<MergedRange> mergedRange(const ir::Graph& earlier, const ir::Graph& later);

/// A graph-name suffix for a specialization: `$batch_1$seq_32`.
std::string specializationSuffix(const SizePoint& point);

/// `batch = 1, seq = 32`, for messages.
std::string describePoint(const SizePoint& point);

} // namespace dync::compiler
