//===- ActivationCheckpoint.cpp - torch.utils.checkpoint.checkpoint -------===//
//
// `checkpoint(function, *args, use_reentrant=False)` trades memory for
// compute: eager runs `function(*args)`, keeps only the inputs, and runs it
// again during backward to rebuild what it needs. The values it returns and
// the gradients backward computes are those of calling `function` directly;
// only when tensors are held differs. A captured graph holds what it holds
// anyway, so capture calls the function: torch.export and torch.compile
// likewise trace the function in place of the checkpoint machinery (saved-
// tensor hooks, frames and weak references no graph can hold).
//
// The reentrant form (`use_reentrant=True`, and the default, which torch
// warns about) is an autograd.Function: it runs the function without grad,
// and when grad mode is on and some tensor argument requiresGrad grad, backward
// runs the function again with grad and differentiates it into those
// arguments and every parameter it reads. So its values and gradients are
// those of calling the function with grad mode on where some tensor
// argument requiresGrad grad, and under no_grad where none does (or grad mode
// is off): parameters of a block whose input requiresGrad no grad get no
// gradient, and its outputs do not require grad. Capture calls it so.
// Keyword arguments for the function are refused, as eager refuses them
// there. A `context_fn` is refused in either form: it wraps the forward in
// contexts of the program's choosing.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Interpreter.h"
#include "frontend/capture/PythonHelpers.h"

namespace dync::capture {

using python::PyRef;

namespace {

/// torch.utils.checkpoint's `checkpoint` (the wrapper torch._disable_dynamo
/// puts around it) and its default `context_fn`, or null pointers when torch
/// has no such module.
struct CheckpointObjects {
  PyObject* checkpoint = nullptr;
  /// The function torch._disable_dynamo's wrapper wraps, which capture
  /// reads in the wrapper's place (ValueBuilder.cpp).
  PyObject* wrapped = nullptr;
  PyObject* noopContext = nullptr;
};

const CheckpointObjects& checkpointObjects() {
  static CheckpointObjects objects = [] {
    CheckpointObjects found; // alive as long as Python: the module holds them
    llvm::Expected<python::PyRef> checkpoint = importObject("torch.utils.checkpoint.checkpoint");
    llvm::Expected<python::PyRef> noop = importObject("torch.utils.checkpoint.noop_context_fn");
    if (checkpoint && noop) {
      found.checkpoint = checkpoint->get();
      PyObject* dict = PyFunction_Check(found.checkpoint)
                           ? reinterpret_cast<PyFunctionObject*>(found.checkpoint)->func_dict
                           : nullptr;
      found.wrapped = dict ? PyDict_GetItemString(dict, "__wrapped__") : nullptr;
      found.noopContext = noop->get();
    }
    llvm::consumeError(checkpoint.takeError());
    llvm::consumeError(noop.takeError());
    PyErr_Clear();
    return found;
  }();
  return objects;
}

bool isFalse(const ValuePtr& value) {
  return value->kind == ValueKind::Constant && value->object.get() == Py_False;
}

} // namespace

llvm::Expected<std::optional<ValuePtr>>
Interpreter::callActivationCheckpoint(const ValuePtr& callee, std::vector<ValuePtr> args,
                                      KeywordArgs kwargs) {
  const CheckpointObjects& objects = checkpointObjects();
  if (!objects.checkpoint ||
      (callee->object.get() != objects.checkpoint && callee->object.get() != objects.wrapped))
    return std::nullopt;
  if (args.empty())
    return captureError("torch.utils.checkpoint.checkpoint needs the function to run");
  bool nonReentrant = false;
  KeywordArgs forwarded;
  for (auto& [name, value] : kwargs) {
    if (name == "use_reentrant") {
      nonReentrant = isFalse(value);
    } else if (name == "context_fn") {
      if (value->object.get() != objects.noopContext)
        return captureError("torch.utils.checkpoint.checkpoint with a context_fn is not "
                            "supported: its contexts wrap the checkpointed forward");
    } else if (name != "determinism_check" && name != "debug" && name != "early_stop" &&
               name != "preserve_rng_state") {
      // These four steer only the recomputation during backward.
      forwarded.emplace_back(name, value);
    }
  }
  ValuePtr function = args.front();
  args.erase(args.begin());
  if (nonReentrant) {
    llvm::Expected<ValuePtr> result = call(function, std::move(args), std::move(forwarded));
    if (!result)
      return result.takeError();
    return std::optional<ValuePtr>(*result);
  }
  if (!forwarded.empty())
    return captureError("torch.utils.checkpoint.checkpoint passes no keyword arguments ('" +
                        forwarded.front().first +
                        "') to the function in its reentrant form (use_reentrant=True, the "
                        "default): eager raises ValueError; pass use_reentrant=False");
  // Grad mode on and a tensor argument requiring grad: the function with
  // grad, as backward's recomputation runs it. Otherwise under no_grad, as
  // the forward runs it, so nothing it computes requires grad.
  PyRef enabled = PyRef::steal(PyObject_CallMethod(types_.torch.get(), "is_grad_enabled", nullptr));
  if (!enabled)
    return pythonError("reading the grad mode");
  bool withGrad = enabled.get() == Py_True && llvm::any_of(args, [](const ValuePtr& arg) {
                    if (!arg->isTensor())
                      return false;
                    PyRef requiresGrad =
                        PyRef::steal(PyObject_GetAttrString(arg->object.get(), "requires_grad"));
                    if (!requiresGrad)
                      PyErr_Clear();
                    return requiresGrad && requiresGrad.get() == Py_True;
                  });
  bool switchOff = enabled.get() == Py_True && !withGrad;
  if (switchOff)
    if (llvm::Error refused =
            recorder_.irreversible("running a reentrant checkpoint's function without grad"))
      return refused;
  if (switchOff)
    setRealGradMode(false);
  llvm::Expected<ValuePtr> result = call(function, std::move(args), {});
  if (switchOff)
    setRealGradMode(true);
  if (!result)
    return result.takeError();
  return std::optional<ValuePtr>(*result);
}

} // namespace dync::capture
