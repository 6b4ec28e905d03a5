//===- NumpyConstants.cpp - NumPy arrays made from constants --------------===//
//
// NumPy is not imported to recognize its values: the type's name, along
// its bases, says what it is.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/NumpyConstants.h"

#include "llvm/ADT/StringRef.h"

namespace dync::capture {

using python::PyRef;

namespace {

bool hasNumpyBase(PyObject* object, llvm::StringRef name) {
  for (PyTypeObject* type = Py_TYPE(object); type; type = type->tp_base)
    if (name == type->tp_name)
      return true;
  return false;
}

} // namespace

bool isConstantArray(const ValuePtr& value) {
  return value->kind == ValueKind::Object && !value->source && value->object &&
         hasNumpyBase(value->object.get(), "numpy.ndarray");
}

PyRef numberOfNumpyScalar(PyObject* object) {
  if (!hasNumpyBase(object, "numpy.generic"))
    return PyRef::borrow(object);
  return PyRef::steal(PyObject_CallMethod(object, "item", nullptr));
}

} // namespace dync::capture
