//===- ThreadLocks.cpp - `with lock:` blocks in captured code -------------===//
#include "frontend/capture/ThreadLocks.h"

#include <string_view>

namespace dync::capture {

namespace {

/// The type `_thread` names \p name, or null (cached: the module's types
/// live as long as the interpreter).
PyObject* threadType(const char* name) {
  PyObject* module = PyImport_ImportModule("_thread");
  if (!module) {
    PyErr_Clear();
    return nullptr;
  }
  PyObject* type = PyObject_GetAttrString(module, name);
  Py_DECREF(module);
  if (!type || !PyType_Check(type)) {
    Py_XDECREF(type);
    PyErr_Clear();
    return nullptr;
  }
  return type;
}

} // namespace

bool isThreadLock(PyObject* object) {
  static PyObject* lockType = threadType("LockType");
  static PyObject* rlockType = threadType("RLock");
  if (!object)
    return false;
  if (PyMethod_Check(object))
    object = PyMethod_GET_SELF(object);
  else if (PyCFunction_Check(object) && PyCFunction_GET_SELF(object))
    object = PyCFunction_GET_SELF(object);
  PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(object));
  return (lockType && type == lockType) || (rlockType && type == rlockType);
}

bool isThreadLockExit(PyObject* object) {
  return object && PyCFunction_Check(object) && PyCFunction_GET_SELF(object) &&
         isThreadLock(PyCFunction_GET_SELF(object)) &&
         std::string_view(reinterpret_cast<PyCFunctionObject*>(object)->m_ml->ml_name) ==
             "__exit__";
}

} // namespace dync::capture
