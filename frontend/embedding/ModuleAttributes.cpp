//===- ModuleAttributes.cpp - Reading a module's tables into C++ -----------===//
#include "frontend/embedding/ModuleAttributes.h"

#include "frontend/embedding/PyStrings.h"
#include "frontend/embedding/PythonError.h"

namespace dync::python {

namespace {

/// "opcode.cmp_op", for messages.
std::string qualifiedName(PyObject* module, const char* name) {
  const char* moduleName = PyModule_Check(module) ? PyModule_GetName(module) : nullptr;
  if (!moduleName)
    PyErr_Clear();
  return (moduleName ? std::string(moduleName) : std::string("?")) + "." + name;
}

} // namespace

llvm::Expected<PyRef> moduleAttribute(PyObject* module, const char* name) {
  std::string what = qualifiedName(module, name);
  PyRef value = PyRef::steal(PyObject_GetAttrString(module, name));
  if (!value)
    return takePythonError("reading " + what);
  return value;
}

llvm::Expected<std::vector<PyRef>> sequenceAttribute(PyObject* module, const char* name) {
  auto value = moduleAttribute(module, name);
  if (!value)
    return value.takeError();
  std::string what = qualifiedName(module, name);
  PyRef fast = PyRef::steal(PySequence_Fast(value->get(), "not a sequence"));
  if (!fast)
    return takePythonError("reading " + what);
  std::vector<PyRef> items;
  Py_ssize_t size = PySequence_Fast_GET_SIZE(fast.get());
  for (Py_ssize_t i = 0; i < size; ++i)
    items.push_back(PyRef::borrow(PySequence_Fast_GET_ITEM(fast.get(), i)));
  return items;
}

llvm::Expected<std::vector<std::string>> stringsAttribute(PyObject* module, const char* name,
                                                          std::optional<Py_ssize_t> field) {
  auto items = sequenceAttribute(module, name);
  if (!items)
    return items.takeError();
  std::vector<std::string> strings;
  for (const PyRef& item : *items) {
    PyRef text = field ? PyRef::steal(PySequence_GetItem(item.get(), *field)) : item;
    std::optional<std::string> utf8 = utf8Of(text.get());
    if (!utf8) {
      PyErr_Clear();
      return llvm::createStringError("an entry of %s does not hold a str where expected",
                                     qualifiedName(module, name).c_str());
    }
    strings.push_back(std::move(*utf8));
  }
  return strings;
}

} // namespace dync::python
