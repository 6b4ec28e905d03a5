//===- LoopOperators.h - torch's scan and while_loop ------------*- C++ -*-===//
//
// torch's looping control-flow operators, called as functions:
//
// - `scan(combine_fn, init, xs, *, dim=0, reverse=False)`
//   (torch._higher_order_ops.scan) runs `carry, y = combine_fn(carry, x)`
//   over the slices of xs along dim and stacks the ys. Capture unrolls it
//   at the scanned length (known while capturing), as eager's loop runs
//   it, with eager's checks; gradients follow eager's scan, an autograd
//   Function (OperatorCalls.h).
// - `while_loop(cond_fn, body_fn, carried_inputs)`
//   (torch._higher_order_ops.while_loop) runs `carried = body_fn(*carried)`
//   while `cond_fn(*carried)` holds. On a predicate known while capturing
//   (a Python bool, or a comparison of sizes, decided as an `if` on it is)
//   capture unrolls it. A tensor predicate is refused.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/BuiltinRegistry.h"
#include "frontend/capture/Value.h"

#include "llvm/Support/Error.h"

#include <vector>

namespace dync::capture {

class BuiltinContext;

/// `scan(combine_fn, init, xs, *, dim=0, reverse=False)`, unrolled.
llvm::Expected<ValuePtr> callScan(BuiltinContext& interp, std::vector<ValuePtr> args,
                                  KeywordArgs kwargs);

/// `associative_scan(combine_fn, xs, dim, reverse=False,
/// combine_mode="pointwise")`: eager's argument checks, in its order (its
/// pointwise mode raises for tensors not on CUDA or XPU). Null for the
/// generic mode, which the caller runs as written.
llvm::Expected<ValuePtr> callAssociativeScan(BuiltinContext& interp, std::vector<ValuePtr> args,
                                             KeywordArgs kwargs);

/// `while_loop(cond_fn, body_fn, carried_inputs)`, unrolled.
llvm::Expected<ValuePtr> callWhileLoop(BuiltinContext& interp, std::vector<ValuePtr> args,
                                       KeywordArgs kwargs);

} // namespace dync::capture
