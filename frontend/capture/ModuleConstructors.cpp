//===- ModuleConstructors.cpp - Module classes capture may make for real --===//
#include "frontend/capture/ModuleConstructors.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/embedding/PyStrings.h"

#include "llvm/ADT/StringRef.h"

namespace dync::capture {

namespace {

/// Whether \p module, a `__module__` value, names torch or a module below it.
bool namesTorchModule(PyObject* module) {
  std::optional<std::string> name =
      module && PyUnicode_Check(module) ? python::utf8Of(module) : std::nullopt;
  return name && (*name == "torch" || llvm::StringRef(*name).starts_with("torch."));
}

/// Whether \p type is defined in torch's package.
bool isTorchClass(PyTypeObject* type) {
  return namesTorchModule(PyDict_GetItemString(type->tp_dict, "__module__"));
}

/// Whether class attribute \p attribute runs code of the class's when
/// construction reaches it: a Python function, a property, a classmethod
/// or staticmethod, or an object of a class written in Python that is a
/// descriptor.
bool runsCode(PyObject* attribute) {
  if (PyFunction_Check(attribute) || PyObject_TypeCheck(attribute, &PyProperty_Type) ||
      PyObject_TypeCheck(attribute, &PyClassMethod_Type) ||
      PyObject_TypeCheck(attribute, &PyStaticMethod_Type))
    return true;
  PyTypeObject* type = Py_TYPE(attribute);
  return (type->tp_flags & Py_TPFLAGS_HEAPTYPE) && (type->tp_descr_get || type->tp_descr_set);
}

/// The torch class of \p mro (or object) that defines \p name in its own
/// dict, or null.
PyTypeObject* torchDefinition(PyObject* mro, PyObject* name) {
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); ++i) {
    auto* base = reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(mro, i));
    if ((base == &PyBaseObject_Type || isTorchClass(base)) &&
        PyDict_GetItemWithError(base->tp_dict, name))
      return base;
  }
  PyErr_Clear();
  return nullptr;
}

} // namespace

std::optional<std::string> programCodeInConstructor(PyTypeObject* type, bool initFollowed) {
  if (Py_TYPE(type) != &PyType_Type)
    return "its metaclass " + qualifiedTypeName(reinterpret_cast<PyObject*>(Py_TYPE(type))) +
           " is not type";
  PyObject* mro = type->tp_mro;
  if (!mro || !PyTuple_Check(mro))
    return std::string("its method resolution order cannot be read");
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); ++i) {
    auto* base = reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(mro, i));
    if (base == &PyBaseObject_Type || isTorchClass(base))
      continue;
    std::string baseName = qualifiedTypeName(reinterpret_cast<PyObject*>(base));
    PyObject *key, *attribute;
    Py_ssize_t pos = 0;
    while (PyDict_Next(base->tp_dict, &pos, &key, &attribute)) {
      if (!PyUnicode_Check(key) || !runsCode(attribute))
        continue;
      std::string name = python::utf8Of(key).value_or("?");
      if (name == "__init__" && initFollowed)
        continue;
      if (name == "__init__" || name == "__new__")
        return baseName + "." + name + " is not torch's";
      if (name == "forward")
        continue;
      if (Py_TYPE(attribute)->tp_descr_set)
        return baseName + " defines the descriptor '" + name +
               "', which torch's attribute assignments may run";
      if (PyTypeObject* torchBase = torchDefinition(mro, key))
        return baseName + "." + name + " overrides " +
               qualifiedTypeName(reinterpret_cast<PyObject*>(torchBase)) + "." + name +
               ", which torch's constructor may call";
    }
  }
  return std::nullopt;
}

bool isTorchFunction(PyObject* function) {
  return PyFunction_Check(function) && namesTorchModule(PyFunction_GET_MODULE(function));
}

bool hasProgramInit(PyTypeObject* type) {
  PyObject* mro = type->tp_mro;
  if (!mro || !PyTuple_Check(mro))
    return false;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); ++i) {
    auto* base = reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(mro, i));
    PyObject* init = PyDict_GetItemString(base->tp_dict, "__init__");
    if (!init)
      continue;
    return base != &PyBaseObject_Type && !isTorchClass(base) && PyFunction_Check(init);
  }
  return false;
}

std::optional<std::string> programCodeInModuleInit(PyTypeObject* type, PyObject* moduleClass) {
  // With call_super_init set, nn.Module.__init__ goes on to the next
  // class's __init__ in the MRO, for real; reading the flag would run a
  // descriptor of the class's.
  python::PyRef flagName = python::PyRef::steal(python::newStr("call_super_init"));
  if (_PyType_Lookup(type, flagName.get()) != Py_False)
    return qualifiedTypeName(reinterpret_cast<PyObject*>(type)) +
           ".call_super_init is not False, so nn.Module.__init__ would call the next "
           "class's __init__";
  // The attributes nn.Module.__init__ sets, as torch's own code sets them
  // on a plain module, not as a list written here.
  python::PyRef plain = python::PyRef::steal(PyObject_CallNoArgs(moduleClass));
  PyObject** dictPointer = plain ? _PyObject_GetDictPtr(plain.get()) : nullptr;
  if (!dictPointer || !*dictPointer) {
    PyErr_Clear();
    return std::string("the attributes nn.Module.__init__ sets cannot be read");
  }
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(*dictPointer, &pos, &key, &value)) {
    PyObject* classAttr = _PyType_Lookup(type, key);
    if (!classAttr || !Py_TYPE(classAttr)->tp_descr_set)
      continue;
    PyTypeObject* owner = torchDefinition(type->tp_mro, key);
    if (owner && PyDict_GetItem(owner->tp_dict, key) == classAttr)
      continue;
    return qualifiedTypeName(reinterpret_cast<PyObject*>(type)) + " defines the descriptor '" +
           python::utf8Of(key).value_or("?") + "', which nn.Module.__init__ assigns";
  }
  return std::nullopt;
}

} // namespace dync::capture
