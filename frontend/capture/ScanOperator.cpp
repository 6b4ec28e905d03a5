//===- ScanOperator.cpp - torch's scan, unrolled ---------------------------===//
//
// Eager's scan moves the scanned dimension first, flips it when reversed,
// runs combine_fn on each slice in turn and stacks the ys, then flips them
// back and moves the dimension back. Unrolled, step k reads slice
// `select(dim, i)` of each xs leaf (i = k, or length-1-k when reversed) and
// the ys are stacked in slice order: the same values, with the layout
// eager's stack and movedim give.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/LoopOperators.h"

#include "frontend/capture/BuiltinContext.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/LoopStep.h"
#include "frontend/capture/OperatorCalls.h"
#include "frontend/capture/ValueTrees.h"
#include "frontend/embedding/PyStrings.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"

#include <string>

namespace dync::capture {

namespace {

/// What eager's scan raises when its checks fail.
llvm::Error raiseScan(const llvm::Twine& message) {
  return raiseBuiltin(PyExc_RuntimeError, message, "the program raises");
}

/// `str(x)` of a leaf for eager's messages.
std::string leafText(const ValuePtr& leaf) {
  if (leaf->isConstant() && leaf->object)
    return python::strOf(leaf->object.get());
  return "a " + spelling(leaf->kind).str();
}

/// `str(type(x))` of a constant, as eager's messages print it.
std::string typeText(const ValuePtr& value) {
  if (value->isConstant() && value->object)
    return python::strOf(reinterpret_cast<PyObject*>(Py_TYPE(value->object.get())));
  return "a " + spelling(value->kind).str();
}

/// The scan's arguments, checked as eager checks them.
struct ScanArguments {
  ValuePtr function;
  TreeShape initShape, xsShape;
  std::vector<ValuePtr> init, xs;
  long long dim = 0;
  bool reverse = false;
  long long length = 0;
};

/// Eager's `_validate_input` after its canonicalize_dim, in its order.
llvm::Error checkArguments(BuiltinContext& interp, ScanArguments& scan, const ValuePtr& dim,
                           const ValuePtr& reverse) {
  if (!dim->isConstant() || !PyLong_Check(dim->object.get()))
    return raiseScan("Dim must be an int, but got " + typeText(dim));
  scan.dim = PyLong_AsLongLong(dim->object.get());
  if (!reverse->isConstant() || !PyBool_Check(reverse->object.get()))
    return raiseScan("Reverse must be a bool, but got " + typeText(reverse));
  scan.reverse = reverse->object.get() == Py_True;
  if (scan.init.empty())
    return raiseScan("scan() operator requires init leaves.");
  for (const ValuePtr& leaf : scan.init)
    if (!leaf->isTensor())
      return raiseScan("All init leaves must be a Tensor but got " + leafText(leaf));
  for (const ValuePtr& leaf : scan.xs)
    if (!leaf->isTensor())
      return raiseScan("All xs leaves must be a Tensor but got " + leafText(leaf));
  std::vector<std::optional<long long>> lengths;
  for (const ValuePtr& leaf : scan.xs) {
    llvm::Expected<ValuePtr> ndim = interp.getAttr(leaf, "ndim");
    if (!ndim)
      return ndim.takeError();
    std::optional<long long> rank = staticSize(*ndim);
    if (rank && *rank <= scan.dim)
      return raiseScan("All xs leaves must at least have 'dim' number of dimensions and scan "
                       "dimension > 0");
  }
  for (const ValuePtr& leaf : scan.xs) {
    llvm::Expected<ValuePtr> size = callMethod(interp, leaf, "size", {makeInt(scan.dim)});
    if (!size)
      return size.takeError();
    std::optional<long long> known = staticSize(*size);
    if (!known)
      return captureError("torch scan over a dynamic scanned dimension is not supported yet: "
                          "capture runs combine_fn once per slice, so the scanned length must be "
                          "known when capturing");
    if (*known == 0)
      return raiseScan("All xs leaves must at least have 'dim' number of dimensions and scan "
                       "dimension > 0");
    lengths.push_back(known);
  }
  scan.length = *lengths.front();
  return llvm::Error::success();
}

/// Binds and checks scan's arguments; none when xs has no leaves (eager
/// then returns `(init, [])` before any check).
llvm::Expected<std::optional<ScanArguments>>
bindScan(BuiltinContext& interp, std::vector<ValuePtr> args, KeywordArgs kwargs, ValuePtr& init) {
  if (args.size() > 3)
    return raiseBuiltin(PyExc_TypeError, "scan() takes 3 positional arguments but " +
                                             llvm::Twine(args.size()) + " were given");
  llvm::Expected<std::vector<ValuePtr>> bound =
      bindArguments("scan", {"combine_fn", "init", "xs", "dim", "reverse"}, 3, std::move(args),
                    std::move(kwargs));
  if (!bound)
    return bound.takeError();
  ScanArguments scan;
  scan.function = (*bound)[0];
  init = (*bound)[1];
  llvm::Expected<TreeShape> initShape = flattenTree("torch scan", init, scan.init);
  if (!initShape)
    return initShape.takeError();
  llvm::Expected<TreeShape> xsShape = flattenTree("torch scan", (*bound)[2], scan.xs);
  if (!xsShape)
    return xsShape.takeError();
  if (scan.xs.empty())
    return std::nullopt;
  scan.initShape = std::move(*initShape);
  scan.xsShape = std::move(*xsShape);
  // Eager canonicalizes dim against the first leaf's rank before its
  // other checks (torch's own function, so its IndexError is eager's).
  llvm::Expected<ValuePtr> rank = interp.getAttr(scan.xs.front(), "ndim");
  if (!rank)
    return rank.takeError();
  llvm::Expected<ValuePtr> canonicalize =
      torchFunction(interp, "torch._prims_common.canonicalize_dim");
  if (!canonicalize)
    return canonicalize.takeError();
  llvm::Expected<ValuePtr> dim =
      interp.call(*canonicalize, {*rank, (*bound)[3] ? (*bound)[3] : makeInt(0)});
  if (!dim)
    return dim.takeError();
  if (llvm::Error error =
          checkArguments(interp, scan, *dim, (*bound)[4] ? (*bound)[4] : makeBool(false)))
    return error;
  return std::optional<ScanArguments>(std::move(scan));
}

/// What one call of combine_fn returned, flattened.
struct ScanStep {
  std::vector<ValuePtr> carry, ys;
  TreeShape ysShape;
};

/// Fails unless \p carry has init's structure and each leaf init's dtype,
/// sizes and device (eager's check_meta_consistency, strides aside).
llvm::Error checkCarry(BuiltinContext& interp, const ScanArguments& scan, const TreeShape& shape,
                       const std::vector<ValuePtr>& carry) {
  if (!(shape == scan.initShape) || carry.size() != scan.init.size())
    return raiseScan("Expected init and carry to have same pytree structure: torch scan's "
                     "combine_fn must return a next carry of init's structure");
  for (size_t i = 0; i < carry.size(); ++i) {
    if (!carry[i]->isTensor())
      return raiseScan("Expected init and carry to have same metadata but carry leaf " +
                       llvm::Twine(i) + " is " + leafText(carry[i]) + ", not a tensor");
    llvm::Expected<const char*> field = differingMetadata(interp, scan.init[i], carry[i]);
    if (!field)
      return field.takeError();
    if (*field)
      return raiseScan("Expected init and carry to have same metadata but found: pair[" +
                       llvm::Twine(i) + "] differ in '" + *field + "'");
  }
  return llvm::Error::success();
}

/// Runs combine_fn on the carry and the slices at \p index.
llvm::Expected<ScanStep> runStep(BuiltinContext& interp, const ScanArguments& scan,
                                 const std::vector<ValuePtr>& carry, long long index) {
  std::vector<ValuePtr> slices;
  for (const ValuePtr& x : scan.xs) {
    llvm::Expected<ValuePtr> slice =
        callMethod(interp, x, "select", {makeInt(scan.dim), makeInt(index)});
    if (!slice)
      return slice.takeError();
    slices.push_back(*slice);
  }
  size_t next = 0, nextX = 0;
  ValuePtr carryTree = unflattenTree(scan.initShape, carry, next);
  ValuePtr xsTree = unflattenTree(scan.xsShape, slices, nextX);
  std::vector<ValuePtr> inputs = carry;
  inputs.insert(inputs.end(), slices.begin(), slices.end());
  StepStart start = startStep(interp, inputs);
  llvm::Expected<ValuePtr> result = interp.call(scan.function, {carryTree, xsTree}, {});
  if (!result)
    return result.takeError();
  if (!(*result)->isSequence())
    return raiseScan("Expect combine_fn to return a tuple (next_carry, y) but got a " +
                     spelling((*result)->kind));
  llvm::Expected<std::vector<ValuePtr>> pair = interp.unpack(*result);
  if (!pair)
    return pair.takeError();
  if (pair->size() != 2)
    return raiseScan("Expect combine_fn to return a tuple (next_carry, y) but got " +
                     llvm::Twine(pair->size()) + " values");
  ScanStep step;
  llvm::Expected<TreeShape> carryShape = flattenTree("torch scan", (*pair)[0], step.carry);
  if (!carryShape)
    return carryShape.takeError();
  if (llvm::Error error = checkCarry(interp, scan, *carryShape, step.carry))
    return error;
  llvm::Expected<TreeShape> ysShape = flattenTree("torch scan", (*pair)[1], step.ys);
  if (!ysShape)
    return ysShape.takeError();
  step.ysShape = std::move(*ysShape);
  for (const ValuePtr& y : step.ys)
    if (!y->isTensor())
      return raiseScan("torch scan's combine_fn must return tensors as the leaves of y (they "
                       "are stacked), but got " +
                       leafText(y));
  std::vector<ValuePtr> outputs = step.carry;
  outputs.insert(outputs.end(), step.ys.begin(), step.ys.end());
  if (llvm::Error error = checkStepEffects(interp, start, outputs, "torch scan's combine_fn"))
    return error;
  return step;
}

/// Stacks each y leaf over the steps, in slice order, and moves the new
/// dimension to dim when the result has one, as eager does.
llvm::Expected<std::vector<ValuePtr>> stackYs(BuiltinContext& interp, const ScanArguments& scan,
                                              std::vector<ScanStep>& steps) {
  if (scan.reverse)
    std::reverse(steps.begin(), steps.end());
  llvm::Expected<ValuePtr> stack = torchFunction(interp, "torch.stack");
  llvm::Expected<ValuePtr> movedim = torchFunction(interp, "torch.movedim");
  if (!stack || !movedim)
    return stack ? movedim.takeError() : stack.takeError();
  std::vector<ValuePtr> stacked;
  for (size_t leaf = 0; leaf < steps.front().ys.size(); ++leaf) {
    std::vector<ValuePtr> column;
    for (const ScanStep& step : steps)
      column.push_back(step.ys[leaf]);
    llvm::Expected<ValuePtr> joined = interp.call(*stack, {makeList(std::move(column))}, {});
    if (!joined)
      return joined.takeError();
    llvm::Expected<ValuePtr> rank = interp.getAttr(*joined, "ndim");
    if (!rank)
      return rank.takeError();
    std::optional<long long> ndim = staticSize(*rank);
    if (scan.dim != 0 && ndim && scan.dim < *ndim) {
      joined = interp.call(*movedim, {*joined, makeInt(0), makeInt(scan.dim)}, {});
      if (!joined)
        return joined.takeError();
    }
    stacked.push_back(*joined);
  }
  return stacked;
}

} // namespace

llvm::Expected<ValuePtr> callScan(BuiltinContext& interp, std::vector<ValuePtr> args,
                                  KeywordArgs kwargs) {
  ValuePtr init;
  llvm::Expected<std::optional<ScanArguments>> bound =
      bindScan(interp, std::move(args), std::move(kwargs), init);
  if (!bound)
    return bound.takeError();
  if (!*bound)
    return makeTuple({init, makeList({})});
  const ScanArguments& scan = **bound;
  std::vector<ValuePtr> carry = scan.init;
  std::vector<ScanStep> steps;
  for (long long k = 0; k < scan.length; ++k) {
    long long index = scan.reverse ? scan.length - 1 - k : k;
    llvm::Expected<ScanStep> step = runStep(interp, scan, carry, index);
    if (!step)
      return step.takeError();
    if (!steps.empty() && !(step->ysShape == steps.front().ysShape))
      return captureError("torch scan's combine_fn returned ys of different structures for "
                          "different slices, which is not supported");
    carry = step->carry;
    steps.push_back(std::move(*step));
  }
  TreeShape ysShape = steps.front().ysShape;
  llvm::Expected<std::vector<ValuePtr>> ys = stackYs(interp, scan, steps);
  if (!ys)
    return ys.takeError();
  // Eager's scan is an autograd Function over init, xs and what
  // combine_fn closes over: with grad mode on, every result requires grad
  // when any of them does, and each gets a gradient. The results' own sums
  // join the inputs' so that a closure one result uses reaches them all.
  llvm::Expected<bool> enabled = gradEnabled();
  if (!enabled)
    return enabled.takeError();
  if (*enabled) {
    std::vector<ValuePtr> inputs = scan.init;
    inputs.insert(inputs.end(), scan.xs.begin(), scan.xs.end());
    inputs.insert(inputs.end(), carry.begin(), carry.end());
    inputs.insert(inputs.end(), ys->begin(), ys->end());
    std::vector<ValuePtr> results = carry;
    results.insert(results.end(), ys->begin(), ys->end());
    if (llvm::Error error = linkInputGradients(interp, inputs, results))
      return error;
    carry.assign(results.begin(), results.begin() + static_cast<long>(carry.size()));
    ys->assign(results.begin() + static_cast<long>(carry.size()), results.end());
  }
  size_t next = 0, nextY = 0;
  return makeTuple(
      {unflattenTree(scan.initShape, carry, next), unflattenTree(ysShape, *ys, nextY)});
}

} // namespace dync::capture
