//===- TensorWhileLoop.h - torch's while_loop on a tensor predicate -*- C++ -*-===//
//
// When `while_loop(cond_fn, body_fn, carried_inputs)`'s cond_fn returns a
// tensor, the number of iterations is known only when the graph runs, so
// capture records both functions as subgraphs of the module and one
// while_loop node that runs them (ir/WhileLoop.h), as torch.export does:
//
// - Each carried tensor is cloned first (eager's results are never its
//   inputs; the node returns its carried operands when body never runs),
//   and cond_fn and body_fn are called once each on the clones unpacked,
//   their calls recorded into their subgraphs. Every other tensor of the
//   enclosing graph they use (a parameter, a tensor they close over) is an
//   additional input: both subgraphs take the carried values, then the
//   union of those, in one order.
// - cond_fn must return a bool tensor of no dimensions; body_fn the carried
//   values' structure, its tensors of the carried dtype, sizes, device
//   and strides. Neither may change anything that existed before it, write
//   its inputs in place, or return one of them or a view of one.
// - The results are new fake tensors standing for the node's results.
// - With grad mode on, a carried value or a tensor the functions use that
//   requires grad is refused: eager's while_loop then runs as an autograd
//   Function whose gradients the loop's own calls do not give (eager's
//   differ from the loop's after none, or two or more, iterations), so no
//   graph can match them. Under `-o` the variant for grad mode on is left
//   out, and those calls run the original code.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/Value.h"
#include "frontend/capture/ValueTrees.h"

#include "llvm/Support/Error.h"

#include <vector>

namespace dync::capture {

class BuiltinContext;

/// Captures `while_loop(cond_fn, body_fn, carried_inputs)` whose cond_fn
/// returned a tensor for the carried values \p leaves (of the pytree
/// \p shape; see above).
llvm::Expected<ValuePtr> callTensorWhileLoop(BuiltinContext& interp, const ValuePtr& condFn,
                                             const ValuePtr& bodyFn, const TreeShape& shape,
                                             const std::vector<ValuePtr>& leaves);

/// Fails, as eager's while_loop does, unless \p out, what body_fn returned
/// (of the pytree \p outShape), has the carried values' structure
/// \p shape, with tensors of the dtype, sizes and device of \p carried's
/// and ints where they hold ints (WhileLoopOperator.cpp).
llvm::Error checkWhileBodyResult(BuiltinContext& interp, const TreeShape& shape,
                                 const std::vector<ValuePtr>& carried, const TreeShape& outShape,
                                 const std::vector<ValuePtr>& out);

} // namespace dync::capture
