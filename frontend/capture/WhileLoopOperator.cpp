//===- WhileLoopOperator.cpp - torch's while_loop, unrolled ---------------===//
//
// `while_loop(cond_fn, body_fn, carried_inputs)` is
//
//   val = carried_inputs
//   while cond_fn(*val):
//       val = body_fn(*val)
//   return val
//
// with each val of carried_inputs' structure and metadata. When cond_fn
// returns a Python bool or a comparison of sizes, capture knows each
// decision and runs the loop as written, each decision guarded as an `if`
// on it is. A tensor predicate is known only when the graph runs: the loop
// is then a node over two subgraphs (TensorWhileLoop.h).
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/LoopOperators.h"

#include "frontend/capture/BuiltinContext.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/LoopStep.h"
#include "frontend/capture/OperatorCalls.h"
#include "frontend/capture/TensorWhileLoop.h"
#include "frontend/capture/ValueTrees.h"
#include "frontend/embedding/PyStrings.h"

#include "llvm/ADT/Twine.h"

namespace dync::capture {

namespace {

/// How many iterations capture runs before it gives up on a loop whose
/// predicate it keeps deciding true.
constexpr long long kMaxIterations = 10000;

llvm::Error raiseWhile(const llvm::Twine& message) {
  return raiseBuiltin(PyExc_RuntimeError, message, "the program raises");
}

/// Whether \p leaf may be carried: a tensor or an int (or a symbolic one).
bool carriable(const ValuePtr& leaf) {
  if (leaf->isTensor())
    return true;
  if (leaf->isConstant())
    return PyLong_Check(leaf->object.get()) && !PyBool_Check(leaf->object.get());
  return leaf->kind == ValueKind::SymNum;
}

/// Decides cond_fn's result \p pred: a bool, or a SymBool of sizes (a
/// guard, as an `if` on it takes).
llvm::Expected<bool> decide(BuiltinContext& interp, const ValuePtr& pred) {
  if (pred->isTensor())
    return captureError("torch while_loop whose cond_fn returns a tensor after returning a "
                        "Python bool is not supported: capture unrolls a loop whose predicate it "
                        "knows, and records a while_loop node for one it does not");
  if (pred->isConstant() && !PyBool_Check(pred->object.get()))
    return raiseWhile("cond_fn must return a boolean scalar tensor or a boolean but got " +
                      python::strOf(pred->object.get()));
  return interp.truth(pred);
}

/// Clones the tensors of \p leaves: eager's while_loop never returns its
/// inputs themselves.
llvm::Error cloneTensors(BuiltinContext& interp, std::vector<ValuePtr>& leaves) {
  for (ValuePtr& leaf : leaves) {
    if (!leaf->isTensor())
      continue;
    llvm::Expected<ValuePtr> copy = callMethod(interp, leaf, "clone", {});
    if (!copy)
      return copy.takeError();
    leaf = *copy;
  }
  return llvm::Error::success();
}

/// Whether any tensor of \p values requires grad.
llvm::Expected<bool> anyRequiresGrad(BuiltinContext& interp, const std::vector<ValuePtr>& values) {
  for (const ValuePtr& value : values) {
    if (!value->isTensor())
      continue;
    llvm::Expected<ValuePtr> flag = interp.getAttr(value, "requires_grad");
    llvm::Expected<bool> needsGrad = flag ? interp.truth(*flag) : flag.takeError();
    if (!needsGrad || *needsGrad)
      return needsGrad;
  }
  return false;
}

/// With grad mode on and a tensor requiring grad, eager's while_loop runs
/// as an autograd Function that stacks every carried value, and refuses
/// ints. \p results holds the final carried values: one requires grad
/// when the loop's functions use a tensor that does.
llvm::Error checkGradCarries(BuiltinContext& interp, const std::vector<ValuePtr>& inputs,
                             const std::vector<ValuePtr>& results) {
  if (llvm::all_of(inputs, [](const ValuePtr& v) { return v->isTensor(); }))
    return llvm::Error::success();
  llvm::Expected<bool> fromInputs = anyRequiresGrad(interp, inputs);
  if (!fromInputs)
    return fromInputs.takeError();
  llvm::Expected<bool> fromResults = *fromInputs ? true : anyRequiresGrad(interp, results);
  if (!fromResults)
    return fromResults.takeError();
  if (*fromResults)
    return raiseWhile("all carried_inputs must be tensors for stack_output: with grad mode on "
                      "and a tensor that requires grad, torch while_loop carries only tensors");
  return llvm::Error::success();
}

} // namespace

llvm::Error checkWhileBodyResult(BuiltinContext& interp, const TreeShape& shape,
                                 const std::vector<ValuePtr>& carried, const TreeShape& outShape,
                                 const std::vector<ValuePtr>& out) {
  if (!(outShape == shape) || out.size() != carried.size())
    return raiseWhile("torch while_loop's body_fn must return the carried values' structure "
                      "(a tuple of the same pytrees as carried_inputs)");
  for (size_t i = 0; i < out.size(); ++i) {
    if (carried[i]->isTensor() != out[i]->isTensor() || !carriable(out[i]))
      return raiseWhile("Expected carried_inputs and body outputs to have same metadata but "
                        "leaf " +
                        llvm::Twine(i) + " differs in type");
    if (!out[i]->isTensor())
      continue;
    llvm::Expected<const char*> field = differingMetadata(interp, carried[i], out[i]);
    if (!field)
      return field.takeError();
    if (*field)
      return raiseWhile("Expected carried_inputs and body outputs to have same metadata but "
                        "found: pair[" +
                        llvm::Twine(i) + "] differ in '" + *field + "'");
  }
  return llvm::Error::success();
}

llvm::Expected<ValuePtr> callWhileLoop(BuiltinContext& interp, std::vector<ValuePtr> args,
                                       KeywordArgs kwargs) {
  llvm::Expected<std::vector<ValuePtr>> bound =
      bindArguments("while_loop", {"cond_fn", "body_fn", "carried_inputs"}, 3, std::move(args),
                    std::move(kwargs));
  if (!bound)
    return bound.takeError();
  const ValuePtr &condFn = (*bound)[0], &bodyFn = (*bound)[1], &carriedInputs = (*bound)[2];
  std::vector<ValuePtr> leaves;
  llvm::Expected<TreeShape> shape = flattenTree("torch while_loop", carriedInputs, leaves);
  if (!shape)
    return shape.takeError();
  if (!carriedInputs->isSequence() || !llvm::all_of(leaves, carriable))
    return raiseWhile("Expect carried_inputs to be a tuple of possibly nested dict/list/tuple "
                      "that only consists of tensor or int leaves");
  TreeShape topTuple = *shape;
  topTuple.kind = TreeShape::Kind::Tuple;
  std::vector<ValuePtr> carried = leaves;
  bool changed = false;
  for (long long iteration = 0;; ++iteration) {
    size_t next = 0;
    ValuePtr value = unflattenTree(*shape, carried, next);
    llvm::Expected<std::vector<ValuePtr>> unpacked = interp.unpack(value);
    if (!unpacked)
      return unpacked.takeError();
    llvm::Expected<ValuePtr> pred = interp.call(condFn, *unpacked, {});
    if (!pred)
      return pred.takeError();
    // A tensor predicate is known only when the graph runs; the calls just
    // recorded for it are dead (and removed as such).
    if (iteration == 0 && (*pred)->isTensor())
      return callTensorWhileLoop(interp, condFn, bodyFn, *shape, leaves);
    llvm::Expected<bool> again = decide(interp, *pred);
    if (!again)
      return again.takeError();
    if (!*again)
      break;
    if (iteration == kMaxIterations)
      return captureError("torch while_loop ran " + llvm::Twine(kMaxIterations) +
                          " iterations while capturing and its predicate still holds; capture "
                          "unrolls a loop whose predicate it knows, so it must end");
    StepStart start = startStep(interp, carried);
    llvm::Expected<ValuePtr> out = interp.call(bodyFn, std::move(*unpacked), {});
    if (!out)
      return out.takeError();
    if (!(*out)->isSequence())
      return raiseWhile("torch while_loop's body_fn must return a tuple of the carried values "
                        "but got a " +
                        spelling((*out)->kind));
    std::vector<ValuePtr> outLeaves;
    llvm::Expected<TreeShape> outShape = flattenTree("torch while_loop", *out, outLeaves);
    if (!outShape)
      return outShape.takeError();
    // A list of the carried values serves as the tuple does.
    outShape->kind = TreeShape::Kind::Tuple;
    if (llvm::Error error = checkWhileBodyResult(interp, topTuple, carried, *outShape, outLeaves))
      return error;
    if (llvm::Error error =
            checkStepEffects(interp, start, outLeaves, "torch while_loop's body_fn"))
      return error;
    carried = std::move(outLeaves);
    changed = true;
  }
  if (!changed)
    if (llvm::Error error = cloneTensors(interp, carried))
      return error;
  llvm::Expected<bool> enabled = gradEnabled();
  if (!enabled)
    return enabled.takeError();
  if (*enabled) {
    if (llvm::Error error = checkGradCarries(interp, leaves, carried))
      return error;
    std::vector<ValuePtr> inputs = leaves;
    inputs.insert(inputs.end(), carried.begin(), carried.end());
    if (llvm::Error error = linkInputGradients(interp, inputs, carried))
      return error;
  }
  size_t next = 0;
  return unflattenTree(topTuple, carried, next);
}

} // namespace dync::capture
