//===- BuiltinRegistry.cpp - The builtins capture implements --------------===//
#include "frontend/capture/BuiltinRegistry.h"

namespace dync::capture {

using python::PyRef;

void BuiltinRegistry::add(PyObject* object, BuiltinHandler handler) {
  handlers_[object] = {PyRef::borrow(object), handler};
  if (Py_IS_TYPE(object, &PyMethodDescr_Type))
    methodDefs_[reinterpret_cast<PyMethodDescrObject*>(object)->d_method] = object;
}

BuiltinHandler BuiltinRegistry::find(PyObject* object) const {
  auto it = handlers_.find(object);
  return it == handlers_.end() ? nullptr : it->second.second;
}

PyObject* BuiltinRegistry::methodDescriptor(const PyMethodDef* def) const {
  auto it = methodDefs_.find(def);
  return it == methodDefs_.end() ? nullptr : it->second;
}

} // namespace dync::capture
