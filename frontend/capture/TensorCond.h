//===- TensorCond.h - torch.cond on a tensor predicate ----------*- C++ -*-===//
//
// Which branch `torch.cond(pred, true_fn, false_fn, operands)` runs on a
// tensor predicate is known only when the graph runs, so capture runs both
// branches, each into a subgraph of the module, and records one cond node
// that runs the one the predicate picks (ir/ControlFlow.h):
//
// - The predicate, a one-element tensor, is read as `bool(pred)` reads it
//   (`aten::is_nonzero`), in the graph.
// - Each branch is called with the operands unpacked, its calls recorded
//   into its subgraph. Every tensor of the enclosing graph a branch uses
//   (an operand, a parameter or tensor it closes over) becomes an input of
//   its subgraph; both subgraphs take the union, in one order, and the
//   cond node passes those values. Guards either branch installs join the
//   graph's.
// - A branch may change nothing that existed before it, write no input in
//   place and return no input or view of one; both must return results of
//   one pytree structure, with tensors of one type at each leaf (and equal
//   constants elsewhere), as torch.cond requires.
// - Its results are new fake tensors standing for the node's results.
//   With grad mode on, eager's cond returns results that require grad when
//   an operand does, and gives every such operand a gradient (zeros when
//   the branch that ran does not use it): each result then goes through
//   `torch.where(False, s, r)`, its value unchanged, with s a sum over the
//   operands whose gradient is zeros.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/Value.h"

#include "llvm/Support/Error.h"

namespace dync::capture {

class BuiltinContext;

/// Captures `torch.cond(pred, true_fn, false_fn, operands)` for a tensor
/// \p pred (see above).
llvm::Expected<ValuePtr> callTensorCond(BuiltinContext& interp, const ValuePtr& pred,
                                        const ValuePtr& trueFn, const ValuePtr& falseFn,
                                        const ValuePtr& operands);

} // namespace dync::capture
