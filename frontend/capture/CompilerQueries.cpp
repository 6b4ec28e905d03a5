//===- CompilerQueries.cpp - What a program asks about being compiled -----===//
#include "frontend/capture/CompilerQueries.h"

namespace dync::capture {

namespace {

/// `module.name` if the module is imported, else nullptr (borrowed). Only
/// modules already imported are read: a program cannot call a function of
/// a module no one imported.
PyObject* importedAttribute(const char* module, const char* name) {
  PyObject* modules = PyImport_GetModuleDict(); // borrowed
  PyObject* found = PyDict_GetItemString(modules, module);
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

} // namespace

bool isCompilerQuery(PyObject* function) {
  // Read afresh each time: cheap, and right even if torch.compiler is
  // imported after capture starts.
  return function && PyFunction_Check(function) &&
         function == importedAttribute("torch.compiler", "is_compiling");
}

bool isExportQuery(PyObject* function) {
  return function && PyFunction_Check(function) &&
         function == importedAttribute("torch.compiler", "is_exporting");
}

} // namespace dync::capture
