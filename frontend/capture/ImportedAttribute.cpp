#include "frontend/capture/ImportedAttribute.h"

namespace dync::capture {

PyObject* importedAttribute(const char* module, const char* name) {
  PyObject* found = PyDict_GetItemString(PyImport_GetModuleDict(), module); // borrowed
  if (!found)
    return nullptr;
  PyObject* attribute = PyObject_GetAttrString(found, name);
  if (!attribute) {
    PyErr_Clear();
    return nullptr;
  }
  Py_DECREF(attribute); // the module keeps it alive
  return attribute;
}

} // namespace dync::capture
