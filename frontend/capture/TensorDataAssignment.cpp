//===- TensorDataAssignment.cpp - `t.data = v` in captured code -----------===//
#include "frontend/capture/TensorDataAssignment.h"

#include "frontend/capture/CaptureError.h"
#include "frontend/capture/CaptureObjects.h"
#include "frontend/capture/PythonHelpers.h"

namespace dync::capture {

using python::PyRef;

namespace {

/// `same_memory` (capture_objects.py), read once per process and kept for
/// its lifetime.
llvm::Expected<PyObject*> sameMemoryFunction() {
  static PyObject* function = nullptr;
  if (function)
    return function;
  llvm::Expected<PyRef> read = captureObject("same_memory");
  if (!read)
    return read.takeError();
  function = Py_NewRef(read->get());
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
