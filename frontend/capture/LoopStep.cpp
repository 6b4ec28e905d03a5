//===- LoopStep.cpp - One step of an unrolled loop operator ---------------===//
#include "frontend/capture/LoopStep.h"

#include "frontend/capture/BuiltinContext.h"
#include "frontend/capture/CaptureError.h"
#include "ir/ControlFlow.h"
#include "ir/OpTraits.h"

namespace dync::capture {

namespace {

/// The node recording \p tensor, or null when it has none.
const ir::Node* recordedNode(BuiltinContext& interp, const ValuePtr& tensor) {
  if (!tensor->isTensor())
    return nullptr;
  llvm::Expected<ir::ValueRef> ref = interp.oracle().recordedValueOf(tensor->object.get());
  if (!ref) {
    llvm::consumeError(ref.takeError());
    return nullptr;
  }
  return ref->node;
}

} // namespace

StepStart startStep(BuiltinContext& interp, const std::vector<ValuePtr>& inputs) {
  StepStart start;
  for (const ir::Node& node : interp.oracle().recordingBuilder().graph().nodes())
    start.before.insert(&node);
  for (const ValuePtr& input : inputs)
    if (const ir::Node* node = recordedNode(interp, input))
      start.inputs.insert(node);
  return start;
}

llvm::Error checkStepEffects(BuiltinContext& interp, const StepStart& start,
                             const std::vector<ValuePtr>& outputs, const llvm::Twine& what) {
  // The inputs' nodes, then every node the step made that may share
  // storage with one of them (a view, or an operator capture knows nothing
  // of).
  llvm::DenseSet<const ir::Node*> ofInputs = start.inputs;
  for (const ir::Node& node : interp.oracle().recordingBuilder().graph().nodes()) {
    if (start.before.contains(&node) || !node.isCall() || ir::isCondCall(node))
      continue;
    bool readsInput = false;
    node.forEachUse([&](const ir::ValueRef& ref) { readsInput |= ofInputs.contains(ref.node); });
    if (!readsInput)
      continue;
    const ir::OpTraits* traits = ir::findOpTraits(node.op());
    if (traits && traits->mutatesArgument)
      return captureError(what + " writes one of its inputs in place (" + node.op() + ")" +
                          node.location().suffix() +
                          "; the loop's function may not mutate its inputs (write to a clone)");
    if (!traits || traits->returnsAlias)
      ofInputs.insert(&node);
  }
  llvm::DenseSet<const PyObject*> returned;
  for (const ValuePtr& output : outputs) {
    const ir::Node* node = recordedNode(interp, output);
    if (!node)
      continue;
    if (ofInputs.contains(node))
      return captureError(what + " returns one of its inputs, or a view of one; the loop's "
                                 "results may not alias its inputs (return a clone)");
    if (!returned.insert(output->object.get()).second)
      return captureError(what + " returns one tensor twice; the loop's "
                                 "results may not alias each other (return a clone)");
  }
  return llvm::Error::success();
}

llvm::Expected<const char*> differingMetadata(BuiltinContext& interp, const ValuePtr& want,
                                              const ValuePtr& got) {
  for (const char* field : {"dtype", "shape", "device"}) {
    llvm::Expected<ValuePtr> a = interp.getAttr(want, field);
    llvm::Expected<ValuePtr> b = a ? interp.getAttr(got, field) : std::move(a);
    if (!b)
      return b.takeError();
    llvm::Expected<ValuePtr> same = interp.compare("==", *a, *b);
    llvm::Expected<bool> equal = same ? interp.truth(*same) : same.takeError();
    if (!equal)
      return equal.takeError();
    if (!*equal)
      return field;
  }
  return nullptr;
}

} // namespace dync::capture
