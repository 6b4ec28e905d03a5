//===- FunctionTransforms.cpp - torch.func's transforms, refused by name --===//
#include "frontend/capture/FunctionTransforms.h"

#include <array>

namespace dync::capture {

std::optional<std::string> functionTransformName(PyObject* function) {
  if (!function || !PyFunction_Check(function))
    return std::nullopt;
  // Only a torch.func someone imported can have given the program one.
  PyObject* module = PyDict_GetItemString(PyImport_GetModuleDict(), "torch.func"); // borrowed
  if (!module)
    return std::nullopt;
  static constexpr std::array<const char*, 9> transforms = {
      "grad",   "grad_and_value", "vjp",       "jvp",          "jacrev",
      "jacfwd", "hessian",        "linearize", "functionalize"};
  for (const char* name : transforms) {
    PyObject* transform = PyObject_GetAttrString(module, name);
    if (!transform) {
      PyErr_Clear();
      continue;
    }
    Py_DECREF(transform); // the module keeps it alive
    if (transform == function)
      return std::string("torch.func.") + name;
  }
  return std::nullopt;
}

} // namespace dync::capture
