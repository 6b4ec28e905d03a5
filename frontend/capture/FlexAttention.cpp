//===- FlexAttention.cpp - flex_attention's entry points, refused by name -===//
#include "frontend/capture/FlexAttention.h"

#include <array>

namespace dync::capture {

std::optional<std::string> flexAttentionFunctionName(PyObject* function) {
  if (!function || !PyFunction_Check(function))
    return std::nullopt;
  // Only a module someone imported can have given the program one.
  PyObject* module = PyDict_GetItemString(PyImport_GetModuleDict(),
                                          "torch.nn.attention.flex_attention"); // borrowed
  if (!module)
    return std::nullopt;
  static constexpr std::array<const char*, 3> entries = {"flex_attention", "create_block_mask",
                                                         "create_mask"};
  for (const char* name : entries) {
    PyObject* entry = PyObject_GetAttrString(module, name);
    if (!entry) {
      PyErr_Clear();
      continue;
    }
    Py_DECREF(entry); // the module keeps it alive
    if (entry == function)
      return std::string("torch.nn.attention.flex_attention.") + name;
  }
  return std::nullopt;
}

} // namespace dync::capture
