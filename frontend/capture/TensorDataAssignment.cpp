//===- TensorDataAssignment.cpp - `t.data = v` in captured code -----------===//
#include "frontend/capture/TensorDataAssignment.h"

#include "frontend/capture/CaptureError.h"
#include "frontend/capture/PythonHelpers.h"

namespace dync::capture {

using python::PyRef;

namespace {

// Run on the fake tensors capture holds: fake mode keeps an alias on its
// base's storage, so `_is_alias_of` answers as it would for the real ones.
// Sizes and strides of one alias are the same expressions, so comparing
// them decides nothing about symbolic sizes.
constexpr const char* SameMemorySource = R"(
import torch

def same_memory(tensor, value):
    return (torch._C._is_alias_of(value, tensor) and value.dtype == tensor.dtype
            and value.device == tensor.device and value.layout == tensor.layout
            and value.storage_offset() == tensor.storage_offset()
            and tuple(value.size()) == tuple(tensor.size())
            and tuple(value.stride()) == tuple(tensor.stride()))
)";

/// The `same_memory` function, made once per process and kept for its
/// lifetime.
llvm::Expected<PyObject*> sameMemoryFunction() {
  static PyObject* function = nullptr;
  if (function)
    return function;
  PyRef code = PyRef::steal(
      Py_CompileString(SameMemorySource, "<dync TensorDataAssignment>", Py_file_input));
  PyRef globals = PyRef::steal(PyDict_New());
  if (!code || !globals ||
      PyDict_SetItemString(globals.get(), "__builtins__", PyEval_GetBuiltins()) < 0)
    return pythonError("setting up the check of a tensor's .data assignment");
  PyRef ran = PyRef::steal(PyEval_EvalCode(code.get(), globals.get(), globals.get()));
  if (!ran)
    return pythonError("setting up the check of a tensor's .data assignment");
  function = PyDict_GetItemString(globals.get(), "same_memory");
  Py_XINCREF(function);
  if (!function)
    return captureError("setting up the check of a tensor's .data assignment failed");
  return function;
}

} // namespace

llvm::Error assignTensorData(const ValuePtr& tensor, const ValuePtr& value,
                             const std::string& target) {
  if (!value->isTensor())
    return captureError("assigning attribute 'data' of " + target +
                        " to a value that is not a tensor");
  llvm::Expected<PyObject*> sameMemory = sameMemoryFunction();
  if (!sameMemory)
    return sameMemory.takeError();
  PyRef answer = PyRef::steal(PyObject_CallFunctionObjArgs(*sameMemory, tensor->object.get(),
                                                           value->object.get(), nullptr));
  if (!answer)
    return pythonError("checking an assignment to " + target + ".data");
  int same = PyObject_IsTrue(answer.get());
  if (same < 0)
    return pythonError("checking an assignment to " + target + ".data");
  if (same)
    return llvm::Error::success();
  return captureError("assigning attribute 'data' of " + target +
                      " to another tensor (it swaps the tensor's storage, a side effect outside "
                      "the graph) is not supported yet; write the new values into it in place "
                      "instead (`with torch.no_grad(): t.copy_(new)`)");
}

} // namespace dync::capture
