//===- NumpyConstants.cpp - NumPy arrays and scalars made from constants --===//
//
// NumPy is not imported to recognize its values: the type's name, along
// its bases, says what it is.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/NumpyConstants.h"

#include "llvm/ADT/StringRef.h"

namespace dync::capture {

namespace {

bool hasNumpyBase(PyTypeObject* type, llvm::StringRef name) {
  for (; type; type = type->tp_base)
    if (name == type->tp_name)
      return true;
  return false;
}

bool isNumpyScalarType(PyTypeObject* type) {
  // numpy.bool_ is spelled `numpy.bool` from NumPy 2 on.
  return hasNumpyBase(type, "numpy.number") || hasNumpyBase(type, "numpy.bool") ||
         hasNumpyBase(type, "numpy.bool_");
}

/// The NumPy scalar type a method \p callable belongs to and its name;
/// null when it is no method of one.
PyTypeObject* numpyScalarMethodType(PyObject* callable, const char** name) {
  if (PyCFunction_Check(callable)) {
    PyObject* self = PyCFunction_GET_SELF(callable);
    if (!self || !isNumpyScalar(self))
      return nullptr;
    *name = reinterpret_cast<PyCFunctionObject*>(callable)->m_ml->ml_name;
    return Py_TYPE(self);
  }
  if (Py_IS_TYPE(callable, &PyMethodDescr_Type)) {
    auto* descriptor = reinterpret_cast<PyMethodDescrObject*>(callable);
    // Most methods are numpy.generic's own, for every scalar type.
    PyTypeObject* owner = descriptor->d_common.d_type;
    if (!isNumpyScalarType(owner) && llvm::StringRef(owner->tp_name) != "numpy.generic")
      return nullptr;
    *name = descriptor->d_method->ml_name;
    return descriptor->d_common.d_type;
  }
  return nullptr;
}

/// Whether the method \p name writes a file: numpy.generic's `dump` and
/// `tofile` take a file, the one way a method of an immutable value
/// reaches state outside it.
bool writesFile(llvm::StringRef name) { return name == "dump" || name == "tofile"; }

} // namespace

bool isConstantArray(const ValuePtr& value) {
  return value->kind == ValueKind::Object && !value->source && value->object &&
         hasNumpyBase(Py_TYPE(value->object.get()), "numpy.ndarray");
}

bool isNumpyScalar(PyObject* object) { return isNumpyScalarType(Py_TYPE(object)); }

bool isPureNumpyScalarMethod(PyObject* callable) {
  const char* name = nullptr;
  return numpyScalarMethodType(callable, &name) && name && !writesFile(name);
}

std::optional<std::string> nonPureNumpyScalarMethod(PyObject* callable) {
  const char* name = nullptr;
  PyTypeObject* type = numpyScalarMethodType(callable, &name);
  if (!type || !name || !writesFile(name))
    return std::nullopt;
  return std::string(type->tp_name) + "." + name +
         " writes a file, which capture cannot do again when the graph runs; write it outside "
         "the function";
}

} // namespace dync::capture
