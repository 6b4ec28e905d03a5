//===- ControlFlowOperators.h - torch.cond and torch map --------*- C++ -*-===//
//
// torch's control-flow operators, called as functions by the program:
// `torch.cond(pred, true_fn, false_fn, operands)`,
// `torch._higher_order_ops.map(f, xs, *args)`, `scan` and `while_loop`.
// torch.export keeps their functions as subgraphs of a higher-order operator; dync does so for cond
// on a tensor predicate, and otherwise gives each the meaning eager
// computes, in the one graph:
//
// - cond on a Python or symbolic bool (a size comparison) runs the branch
//   the predicate takes, as eager does, with the decision guarded as an
//   `if` on it is. cond on a tensor predicate (its value known only when
//   the graph runs) captures both branches as subgraphs run by a cond node
//   (TensorCond.h).
// - map runs its function once per row of the mapped tensors (a static
//   leading size) and stacks the results, as eager's map does.
// - scan and while_loop (on a predicate known while capturing) are
//   unrolled, with eager's checks (LoopOperators.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/BuiltinRegistry.h"
#include "frontend/capture/Value.h"

#include "llvm/Support/Error.h"

#include <Python.h>

#include <optional>
#include <vector>

namespace dync::capture {

class BuiltinContext;

enum class ControlFlowOperator { Cond, Map, Scan, AssociativeScan, WhileLoop };

/// Which control-flow operator \p function is (by identity with torch's
/// functions, once the program's torch has imported them), or none.
std::optional<ControlFlowOperator> controlFlowOperator(PyObject* function);

/// Calls \p op on \p args and \p kwargs as eager would (see above); null
/// when the function is to run as written.
llvm::Expected<ValuePtr> callControlFlowOperator(BuiltinContext& interp, ControlFlowOperator op,
                                                 std::vector<ValuePtr> args, KeywordArgs kwargs);

} // namespace dync::capture
