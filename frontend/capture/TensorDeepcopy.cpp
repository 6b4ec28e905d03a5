//===- TensorDeepcopy.cpp - copy.deepcopy of a tensor value ----------------===//
//
// `copy.deepcopy` reaches a tensor's leaves through Tensor.__deepcopy__
// (dataclasses.asdict and astuple copy every leaf so). Run by the oracle,
// its result would be the fake it was given back, so the copy would alias
// the original; it is made here as eager makes it: a leaf not requiring
// grad becomes a clone (under no_grad, with the original's strides), a
// tensor computed with grad raises eager's RuntimeError, and a leaf that
// requires grad, which eager copies into a new leaf of its own, is refused.
//
//===----------------------------------------------------------------------===//

#include "frontend/capture/BuiltinContext.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/PythonHelpers.h"

namespace dync::capture {

using python::PyRef;

namespace {

using Args = std::vector<ValuePtr>;

/// bool(fake.NAME), or an error.
llvm::Expected<bool> fakeFlag(PyObject* fake, const char* name) {
  PyRef flag = PyRef::steal(PyObject_GetAttrString(fake, name));
  int truth = flag ? PyObject_IsTrue(flag.get()) : -1;
  if (truth < 0)
    return pythonError(llvm::Twine("reading Tensor.") + name);
  return truth == 1;
}

/// The strides of fake tensor \p fake as Python objects compare them.
llvm::Expected<PyRef> fakeStrides(PyObject* fake) {
  PyRef strides = PyRef::steal(PyObject_CallMethod(fake, "stride", nullptr));
  if (!strides)
    return pythonError("reading Tensor.stride()");
  return strides;
}

llvm::Expected<ValuePtr> tensorDeepcopy(BuiltinContext& interp, const ValuePtr&, Args& args,
                                        KeywordArgs& kwargs) {
  if (args.size() != 2 || !kwargs.empty() || !args[0]->isTensor())
    return captureError("Tensor.__deepcopy__ takes a tensor and a memo dict");
  PyObject* fake = args[0]->object.get();
  llvm::Expected<bool> requiresGrad = fakeFlag(fake, "requires_grad");
  if (!requiresGrad)
    return requiresGrad.takeError();
  llvm::Expected<bool> leaf = fakeFlag(fake, "is_leaf");
  if (!leaf)
    return leaf.takeError();
  if (!*leaf)
    return raiseBuiltin(PyExc_RuntimeError,
                        "Only Tensors created explicitly by the user (graph leaves) support the "
                        "deepcopy protocol at the moment.  If you were attempting to deepcopy a "
                        "module, this may be because of a torch.nn.utils.weight_norm usage, see "
                        "https://github.com/pytorch/pytorch/pull/103001");
  if (*requiresGrad)
    return captureError("copy.deepcopy of a tensor that requires grad (a parameter, or an input "
                        "that requires grad) makes a new leaf tensor that requires grad, which a "
                        "graph cannot make yet: copy it with .detach().clone() instead");
  llvm::Expected<PyRef> clone = importObject("torch.Tensor.clone");
  if (!clone)
    return clone.takeError();
  llvm::Expected<ValuePtr> copied = interp.callOracle(clone->get(), {args[0]}, {});
  if (!copied)
    return copied.takeError();
  // Eager copies the whole storage and keeps the view's strides; clone keeps
  // them only for a dense tensor.
  llvm::Expected<PyRef> before = fakeStrides(fake);
  if (!before)
    return before.takeError();
  llvm::Expected<PyRef> after = fakeStrides((*copied)->object.get());
  if (!after)
    return after.takeError();
  int same = PyObject_RichCompareBool(before->get(), after->get(), Py_EQ);
  if (same < 0)
    return pythonError("comparing strides");
  if (!same)
    return captureError("copy.deepcopy of a tensor view that is not dense (strides " +
                        reprOf(before->get()) +
                        ") is not supported: eager's copy keeps the view's strides, a graph's "
                        "clone does not; copy it with .clone() instead");
  return copied;
}

} // namespace

llvm::Error registerTensorCopyHandlers(BuiltinContext& interp) {
  llvm::Expected<PyRef> deepcopy = importObject("torch.Tensor.__deepcopy__");
  if (!deepcopy)
    return deepcopy.takeError();
  addBuiltin(interp, deepcopy->get(), tensorDeepcopy);
  return llvm::Error::success();
}

} // namespace dync::capture
