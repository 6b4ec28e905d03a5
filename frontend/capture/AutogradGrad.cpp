//===- AutogradGrad.cpp - torch.autograd.grad inside the function ---------===//
//
// Programs differentiate inside the function they run: a gradient penalty
// (R1, WGAN-GP) takes the critic's gradient with respect to its input and
// its norm joins the loss, a molecular model's forces are -dE/dx, a MAML
// inner loop steps its parameters along their gradient, saliency maps are
// input gradients. The gradient is computed from the history autograd
// recorded of the forward, which the fake tensors carry too: capture runs
// `torch.autograd.grad` itself on them, under the oracle's recording mode,
// as make_fx traces a joint forward and backward graph, so the backward
// formulas' ATen calls are graph nodes (dync_oracle_backward). What the
// engine does around them (grad mode create_graph decides, saved tensors
// unpacked) is read as eager's engine does it (dync_oracle_records).
//
// Hooks a tensor of the function has registered would run inside eager's
// backward; capture registers them on the real tensors after the graph
// (TensorHooks.cpp), so such a call is refused. The fakes of the inputs are
// leaves without hooks, so the backward capture ran stops at them; eager's
// goes on through a caller's tensor that has a history (to parameters it
// was computed from) and runs the hooks the caller registered on it. Each
// input that requires grad is therefore guarded `autograd_leaf`
// (Capture.cpp's addGuards): other calls run the original code.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/AutogradGrad.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Interpreter.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/embedding/PyStrings.h"
#include "frontend/oracle/EmbeddedModules.h"

namespace dync::capture {

using python::PyRef;

namespace {

/// torch.autograd.grad, or null when torch has none.
PyObject* autogradGradFunction() {
  static PyObject* function = [] { // alive as long as torch
    llvm::Expected<PyRef> found = importObject("torch.autograd.grad");
    if (!found) {
      llvm::consumeError(found.takeError());
      PyErr_Clear();
      return static_cast<PyObject*>(nullptr);
    }
    return found->release();
  }();
  return function;
}

/// The function \p name of dync_oracle_backward, or null when the module
/// cannot be loaded; a reference kept for the process's life.
PyObject* backwardModuleFunction(const char* name) {
  llvm::Expected<PyRef> module = oracle::importEmbeddedModule("dync_oracle_backward");
  if (!module) {
    llvm::consumeError(module.takeError());
    PyErr_Clear();
    return nullptr;
  }
  PyRef function = PyRef::steal(PyObject_GetAttrString(module->get(), name));
  PyErr_Clear();
  return function.release();
}

} // namespace

bool isAutogradGrad(const Value& function) {
  return function.object && function.object.get() == autogradGradFunction();
}

llvm::Expected<std::string> freedHistoryNode(PyObject* tensor) {
  static PyObject* freed = backwardModuleFunction("freed_history");
  if (!freed)
    return captureError("torch.autograd.grad: dync's backward module could not be loaded");
  PyRef node = PyRef::steal(PyObject_CallOneArg(freed, tensor));
  if (!node)
    return pythonError("reading which saved tensors torch.autograd.grad freed");
  if (node.get() == Py_None)
    return "";
  return python::strOf(node.get());
}

llvm::Expected<ValuePtr> Interpreter::callAutogradGrad(std::vector<ValuePtr> args,
                                                       KeywordArgs kwargs) {
  for (const RegisteredHook& hook : registeredHooks_)
    if (hook.tensor && !hook.removed)
      return captureError("torch.autograd.grad after a tensor hook registered at " + hook.where +
                          " is not supported yet: eager runs the hook inside the backward, "
                          "where capture registers it on the real tensor after the graph");
  static PyObject* grad = backwardModuleFunction("grad");
  if (!grad)
    return captureError("torch.autograd.grad: dync's backward module could not be loaded");
  // torch's function takes any iterable of tensors for outputs, inputs and
  // grad_outputs (`self.parameters()`, a generator) and makes a tuple of
  // it; the oracle's arguments must be values it can pass, so the tuple is
  // made here, in the program's order.
  static const char* const sequences[] = {"outputs", "inputs", "grad_outputs"};
  for (size_t i = 0; i < std::size(sequences); ++i) {
    ValuePtr* slot = i < args.size() ? &args[i] : nullptr;
    for (auto& [name, value] : kwargs)
      if (name == sequences[i])
        slot = &value;
    if (!slot || !*slot || (*slot)->kind == ValueKind::Tensor || (*slot)->kind == ValueKind::List ||
        (*slot)->kind == ValueKind::Tuple || (*slot)->isNone())
      continue;
    llvm::Expected<std::vector<ValuePtr>> items = unpack(*slot);
    if (!items)
      return items.takeError();
    *slot = makeTuple(std::move(*items));
  }
  runsBackward_ = true;
  return callOracle(grad, args, kwargs);
}

} // namespace dync::capture
