//===- TensorIndexStore.cpp - `t[i] = v` with a 0-d integer tensor i ------===//
#include "frontend/capture/TensorIndexStore.h"

#include "frontend/capture/CaptureError.h"
#include "frontend/capture/PythonHelpers.h"

namespace dync::capture {

using python::PyRef;

namespace {

/// Whether the fake tensor \p tensor is 0-d with a dtype eager's indexing
/// reads as an integer: integral, and neither bool nor uint8 (masks).
llvm::Expected<bool> isZeroDimIntegerIndex(PyObject* tensor) {
  PyRef ndim = PyRef::steal(PyObject_GetAttrString(tensor, "ndim"));
  if (!ndim)
    return pythonError("reading the rank of an index tensor");
  long rank = PyLong_AsLong(ndim.get());
  if (rank == -1 && PyErr_Occurred())
    return pythonError("reading the rank of an index tensor");
  if (rank != 0)
    return false;
  PyRef dtype = PyRef::steal(PyObject_GetAttrString(tensor, "dtype"));
  if (!dtype)
    return pythonError("reading the dtype of an index tensor");
  for (const char* flag : {"is_floating_point", "is_complex"}) {
    PyRef set = PyRef::steal(PyObject_GetAttrString(dtype.get(), flag));
    if (!set)
      return pythonError("reading the dtype of an index tensor");
    if (set.get() == Py_True)
      return false;
  }
  for (const char* mask : {"torch.bool", "torch.uint8"}) {
    llvm::Expected<PyRef> maskType = importObject(mask);
    if (!maskType)
      return maskType.takeError();
    if (dtype.get() == maskType->get())
      return false;
  }
  return true;
}

} // namespace

llvm::Expected<bool> storeAtTensorIndex(MachineContext& context, const ValuePtr& base,
                                        const ValuePtr& key, const ValuePtr& value) {
  if (!key->isTensor())
    return false;
  llvm::Expected<bool> integerIndex = isZeroDimIntegerIndex(key->object.get());
  if (!integerIndex || !*integerIndex)
    return integerIndex;
  // The values as copy_ would write them: a tensor cast to base's dtype, a
  // number made a 0-d tensor of it (new_full casts as fill_ does).
  ValuePtr values;
  if (value->isTensor()) {
    PyRef dtype = PyRef::steal(PyObject_GetAttrString(base->object.get(), "dtype"));
    if (!dtype)
      return pythonError("reading the dtype of an indexed tensor");
    llvm::Expected<PyRef> to = importObject("torch.Tensor.to");
    if (!to)
      return to.takeError();
    llvm::Expected<ValuePtr> cast = context.callOracle(to->get(), {value, makeConstant(dtype)}, {});
    if (!cast)
      return cast.takeError();
    values = *cast;
  } else {
    llvm::Expected<PyRef> newFull = importObject("torch.Tensor.new_full");
    if (!newFull)
      return newFull.takeError();
    llvm::Expected<ValuePtr> filled =
        context.callOracle(newFull->get(), {base, makeTuple({}), value}, {});
    if (!filled)
      return filled.takeError();
    values = *filled;
  }
  llvm::Expected<PyRef> indexPut = importObject("torch.Tensor.index_put_");
  if (!indexPut)
    return indexPut.takeError();
  llvm::Expected<ValuePtr> stored =
      context.callOracle(indexPut->get(), {base, makeTuple({key}), values}, {});
  if (!stored)
    return stored.takeError();
  return true;
}

} // namespace dync::capture
