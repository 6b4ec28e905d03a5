//===- ControlFlowOperators.cpp - torch.cond and torch map ----------------===//
#include "frontend/capture/ControlFlowOperators.h"

#include "frontend/capture/ArgumentBinding.h"
#include "frontend/capture/BuiltinContext.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/ImportedAttribute.h"
#include "frontend/capture/LoopOperators.h"
#include "frontend/capture/OperatorCalls.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/capture/TensorCond.h"
#include "frontend/capture/ValueTrees.h"

#include "llvm/ADT/Twine.h"

#include <string>

namespace dync::capture {

using python::PyRef;

namespace {

//===----------------------------------------------------------------------===//
// torch.cond
//===----------------------------------------------------------------------===//

llvm::Expected<ValuePtr> callCond(BuiltinContext& interp, std::vector<ValuePtr> args,
                                  KeywordArgs kwargs) {
  llvm::Expected<std::vector<ValuePtr>> bound = bindArguments(
      "cond", {"pred", "true_fn", "false_fn", "operands"}, 3, std::move(args), std::move(kwargs));
  if (!bound)
    return bound.takeError();
  const ValuePtr& pred = (*bound)[0];
  ValuePtr operands = (*bound)[3] ? (*bound)[3] : makeTuple({});
  // Which branch runs is known only when the graph runs: both are captured,
  // each into a subgraph (TensorCond.cpp).
  if (pred->isTensor())
    return callTensorCond(interp, pred, (*bound)[1], (*bound)[2], operands);
  // A Python number, or a SymBool of sizes: eager holds a bool there and
  // runs `true_fn(*operands)` or `false_fn(*operands)`. Deciding on a
  // symbolic predicate guards it, as an `if` does.
  llvm::Expected<bool> taken = interp.truth(pred);
  if (!taken)
    return taken.takeError();
  llvm::Expected<std::vector<ValuePtr>> unpacked = interp.unpack(operands);
  if (!unpacked)
    return unpacked.takeError();
  return interp.call((*bound)[*taken ? 1 : 2], std::move(*unpacked), {});
}

//===----------------------------------------------------------------------===//
// torch._higher_order_ops.map
//===----------------------------------------------------------------------===//

llvm::Expected<ValuePtr> callMap(BuiltinContext& interp, std::vector<ValuePtr> args,
                                 KeywordArgs kwargs) {
  std::vector<ValuePtr> rest;
  llvm::Expected<std::vector<ValuePtr>> bound =
      bindArguments("map", {"f", "xs"}, 2, std::move(args), std::move(kwargs), &rest);
  if (!bound)
    return bound.takeError();
  const ValuePtr& function = (*bound)[0];
  std::vector<ValuePtr> flatXs;
  llvm::Expected<TreeShape> xsShape = flattenTree("torch map", (*bound)[1], flatXs);
  if (!xsShape)
    return xsShape.takeError();
  // What eager's map checks before it runs anything.
  if (flatXs.empty() || !llvm::all_of(flatXs, [](const ValuePtr& x) { return x->isTensor(); }))
    return raiseBuiltin(PyExc_RuntimeError, "Mapped xs can only consist of tensors.",
                        "the program raises");
  std::optional<long long> rows;
  for (const ValuePtr& x : flatXs) {
    llvm::Expected<ValuePtr> size = callMethod(interp, x, "size", {makeInt(0)});
    if (!size)
      return size.takeError();
    std::optional<long long> known = staticSize(*size);
    if (!known)
      return captureError("torch map over a dynamic leading dimension is not supported yet: "
                          "capture runs the mapped function once per row, so the number of "
                          "rows must be known when capturing");
    if (!rows) {
      rows = *known;
      if (*rows == 0)
        return raiseBuiltin(PyExc_RuntimeError, "Leading dimensions of mapped xs cannot be 0.",
                            "the program raises");
    } else if (*known != *rows) {
      return raiseBuiltin(PyExc_RuntimeError, "Leading dimensions of mapped xs must be consistent.",
                          "the program raises");
    }
  }
  // One call per row, on that row of every mapped tensor (a view, as
  // eager's iteration over the tensor gives), with the other arguments as
  // given.
  std::optional<TreeShape> outShape;
  std::vector<std::vector<ValuePtr>> outLeaves;
  for (long long row = 0; row < *rows; ++row) {
    std::vector<ValuePtr> rowLeaves;
    for (const ValuePtr& x : flatXs) {
      llvm::Expected<ValuePtr> slice = callMethod(interp, x, "select", {makeInt(0), makeInt(row)});
      if (!slice)
        return slice.takeError();
      rowLeaves.push_back(*slice);
    }
    size_t next = 0;
    std::vector<ValuePtr> callArgs{unflattenTree(*xsShape, rowLeaves, next)};
    callArgs.insert(callArgs.end(), rest.begin(), rest.end());
    llvm::Expected<ValuePtr> result = interp.call(function, std::move(callArgs), {});
    if (!result)
      return result.takeError();
    std::vector<ValuePtr> leaves;
    llvm::Expected<TreeShape> shape = flattenTree("torch map", *result, leaves);
    if (!shape)
      return shape.takeError();
    // Eager stacks leaf by leaf under the last row's structure; rows that
    // differ are refused rather than paired up as zip would.
    if (outShape && !(*outShape == *shape))
      return captureError("torch map's function returned results of different structures for "
                          "different rows, which is not supported");
    outShape = std::move(*shape);
    outLeaves.push_back(std::move(leaves));
  }
  llvm::Expected<PyRef> stackFunction = importObject("torch.stack");
  if (!stackFunction)
    return stackFunction.takeError();
  llvm::Expected<ValuePtr> stack = interp.values().wrapReal(stackFunction->get(), nullptr);
  if (!stack)
    return stack.takeError();
  std::vector<ValuePtr> stacked;
  for (size_t leaf = 0; leaf < outLeaves.front().size(); ++leaf) {
    std::vector<ValuePtr> column;
    for (const std::vector<ValuePtr>& rowLeaves : outLeaves)
      column.push_back(rowLeaves[leaf]);
    if (llvm::all_of(column, [](const ValuePtr& v) { return v->isTensor(); })) {
      llvm::Expected<ValuePtr> joined = interp.call(*stack, {makeList(std::move(column))}, {});
      if (!joined)
        return joined.takeError();
      stacked.push_back(*joined);
    } else if (llvm::all_of(column, [](const ValuePtr& v) { return v->isNone(); })) {
      stacked.push_back(makeNone());
    } else {
      return raiseBuiltin(PyExc_RuntimeError,
                          "Cannot stack the results of the mapped function: each leaf must be "
                          "a tensor (or None) in every row",
                          "the program raises");
    }
  }
  size_t next = 0;
  return unflattenTree(*outShape, stacked, next);
}

} // namespace

std::optional<ControlFlowOperator> controlFlowOperator(PyObject* function) {
  if (!function || !PyFunction_Check(function))
    return std::nullopt;
  if (function == importedAttribute("torch._higher_order_ops.cond", "cond"))
    return ControlFlowOperator::Cond;
  if (function == importedAttribute("torch._higher_order_ops.map", "map"))
    return ControlFlowOperator::Map;
  if (function == importedAttribute("torch._higher_order_ops.scan", "scan"))
    return ControlFlowOperator::Scan;
  if (function == importedAttribute("torch._higher_order_ops.associative_scan", "associative_scan"))
    return ControlFlowOperator::AssociativeScan;
  if (function == importedAttribute("torch._higher_order_ops.while_loop", "while_loop"))
    return ControlFlowOperator::WhileLoop;
  return std::nullopt;
}

llvm::Expected<ValuePtr> callControlFlowOperator(BuiltinContext& interp, ControlFlowOperator op,
                                                 std::vector<ValuePtr> args, KeywordArgs kwargs) {
  switch (op) {
  case ControlFlowOperator::Cond:
    return callCond(interp, std::move(args), std::move(kwargs));
  case ControlFlowOperator::Map:
    return callMap(interp, std::move(args), std::move(kwargs));
  case ControlFlowOperator::Scan:
    return callScan(interp, std::move(args), std::move(kwargs));
  case ControlFlowOperator::AssociativeScan:
    return callAssociativeScan(interp, std::move(args), std::move(kwargs));
  case ControlFlowOperator::WhileLoop:
    return callWhileLoop(interp, std::move(args), std::move(kwargs));
  }
  return captureError("unknown control-flow operator");
}

} // namespace dync::capture
