//===- PyStrings.cpp - Reading Python objects as UTF-8 text ----------------===//
#include "frontend/embedding/PyStrings.h"

#include "frontend/embedding/PyRef.h"

namespace dync::python {

std::optional<std::string> utf8Of(PyObject* object) {
  if (!object || !PyUnicode_Check(object))
    return std::nullopt;
  // Paths decoded with surrogateescape must round-trip to their bytes, so
  // encode the same way instead of failing on lone surrogates.
  PyRef bytes = PyRef::steal(PyUnicode_AsEncodedString(object, "utf-8", "surrogateescape"));
  if (!bytes) {
    PyErr_Clear();
    bytes = PyRef::steal(PyUnicode_AsEncodedString(object, "utf-8", "backslashreplace"));
  }
  if (!bytes) {
    PyErr_Clear();
    return std::nullopt;
  }
  return std::string(PyBytes_AS_STRING(bytes.get()), PyBytes_GET_SIZE(bytes.get()));
}

std::string strOf(PyObject* object) {
  if (!object)
    return "<null>";
  PyRef text = PyRef::steal(PyObject_Str(object));
  if (!text)
    PyErr_Clear();
  if (auto result = utf8Of(text.get()))
    return *result;
  return "<unprintable " + typeDisplayName(Py_TYPE(object)) + " object>";
}

std::string typeDisplayName(PyTypeObject* type) {
  PyObject* typeObject = reinterpret_cast<PyObject*>(type);
  PyRef qualname = PyRef::steal(PyObject_GetAttrString(typeObject, "__qualname__"));
  PyRef module = PyRef::steal(PyObject_GetAttrString(typeObject, "__module__"));
  PyErr_Clear();
  std::optional<std::string> name = utf8Of(qualname.get());
  if (!name)
    return type->tp_name;
  std::optional<std::string> moduleName = utf8Of(module.get());
  if (!moduleName || *moduleName == "builtins" || *moduleName == "__main__")
    return *name;
  return *moduleName + "." + *name;
}

PyObject* newStr(llvm::StringRef text) {
  return PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "surrogateescape");
}

std::vector<std::string> strItemsOf(PyObject* sequence) {
  std::vector<std::string> texts;
  PyRef fast = PyRef::steal(PySequence_Fast(sequence, "not a sequence"));
  if (!fast) {
    PyErr_Clear();
    return texts;
  }
  Py_ssize_t size = PySequence_Fast_GET_SIZE(fast.get());
  for (Py_ssize_t i = 0; i < size; ++i)
    if (auto text = utf8Of(PySequence_Fast_GET_ITEM(fast.get(), i)))
      texts.push_back(std::move(*text));
  return texts;
}

std::vector<std::string> dirOf(PyObject* object) {
  PyRef list = PyRef::steal(PyObject_Dir(object));
  if (!list) {
    PyErr_Clear();
    return {};
  }
  return strItemsOf(list.get());
}

} // namespace dync::python
