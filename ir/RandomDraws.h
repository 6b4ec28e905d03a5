//===- RandomDraws.h - Whether a call draws random numbers ------*- C++ -*-===//
//
// torch tags an operator nondeterministic_seeded when some of its calls
// draw from the random generator: a fact of the operator, not of a call.
// CPU attention is tagged for its `dropout_p`, yet every model in eval mode
// calls it with 0, and draws nothing. Whether one node draws is read from
// its arguments, by the rule the oracle follows while capturing
// (frontend/oracle/embedded/oracle_draws.py): a tagged operator draws
// unless the call gives a `train`/`training` bool the constant False or a
// `dropout_p`/`dropout` float the constant 0 (the schema's default counts
// as given). A value computed in the graph is no constant, and a call with
// one draws.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace dync::ir {

class Node;

/// Whether call \p node may draw from, reseed or set the default random
/// generator (a random operator's call whose arguments leave its draws on,
/// or one of dync's generator operators). Subgraphs the node runs are not
/// looked into.
bool mayDraw(const Node& node);

} // namespace dync::ir
