//===- PythonHelpers.cpp - Small C API conveniences for capture -----------===//
#include "frontend/capture/PythonHelpers.h"

#include "frontend/capture/CaptureError.h"
#include "frontend/embedding/PyStrings.h"
#include "frontend/oracle/EmbeddedModules.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <string_view>

namespace dync::capture {

using python::PyRef;

namespace {

/// Keeps a pending Python exception across code that describes objects for
/// a message: the message is built before the exception is taken.
class PreserveException {
public:
  PreserveException() { PyErr_Fetch(&type_, &value_, &traceback_); }
  ~PreserveException() { PyErr_Restore(type_, value_, traceback_); }
  PreserveException(const PreserveException&) = delete;
  PreserveException& operator=(const PreserveException&) = delete;

private:
  PyObject *type_ = nullptr, *value_ = nullptr, *traceback_ = nullptr;
};

} // namespace

llvm::Error pythonError(const llvm::Twine& what) {
  if (!PyErr_Occurred())
    return captureError(what + " failed");
  PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback);
  PyRef typeRef = PyRef::steal(type), valueRef = PyRef::steal(value),
        tracebackRef = PyRef::steal(traceback);
  std::string typeName = type && PyType_Check(type)
                             ? python::typeDisplayName(reinterpret_cast<PyTypeObject*>(type))
                             : "exception";
  std::string message = value ? python::strOf(value) : "";
  std::string text = what.str();
  text += (text.empty() ? "" : ": ") + typeName;
  if (!message.empty())
    text += ": " + message;
  return captureError(text);
}

namespace {

/// Whether importing \p moduleName must fail without running anything:
/// its parent module is loaded and is no package (has no `__path__`), which
/// import checks before it asks any finder. Capture looks names such as
/// `torch.nn.modules.module._global_forward_hooks` up often, and a failed
/// import costs a search of sys.meta_path and an exception.
bool cannotBeSubmodule(llvm::StringRef moduleName) {
  auto [parentName, _] = moduleName.rsplit('.');
  if (parentName == moduleName)
    return false;
  PyRef name = PyRef::steal(
      PyUnicode_FromStringAndSize(parentName.data(), static_cast<Py_ssize_t>(parentName.size())));
  PyRef parent = name ? PyRef::steal(PyImport_GetModule(name.get())) : PyRef();
  if (!parent || parent.get() == Py_None) {
    PyErr_Clear();
    return false;
  }
  PyRef path = PyRef::steal(PyObject_GetAttrString(parent.get(), "__path__"));
  if (path)
    return false;
  bool notPackage = PyErr_ExceptionMatches(PyExc_AttributeError);
  PyErr_Clear();
  return notPackage;
}

/// The module \p moduleName as `PyImport_ImportModule` gives it: a module
/// already in sys.modules is that entry (None there fails), read without the
/// import machinery; others are imported. Null, with no error set, when it
/// cannot be imported.
PyRef importModule(const std::string& moduleName) {
  PyRef name = PyRef::steal(PyUnicode_FromString(moduleName.c_str()));
  PyRef loaded = name ? PyRef::steal(PyImport_GetModule(name.get())) : PyRef();
  PyErr_Clear();
  if (loaded)
    return loaded.get() == Py_None ? PyRef() : loaded;
  if (cannotBeSubmodule(moduleName))
    return PyRef();
  PyRef imported = PyRef::steal(PyImport_ImportModule(moduleName.c_str()));
  if (!imported)
    PyErr_Clear();
  return imported;
}

} // namespace

llvm::Expected<PyRef> importObject(llvm::StringRef dottedName) {
  llvm::SmallVector<llvm::StringRef, 4> parts;
  dottedName.split(parts, '.');
  // Import the longest prefix that is a module, then walk attributes.
  for (size_t n = parts.size(); n > 0; --n) {
    std::string moduleName;
    for (size_t i = 0; i < n; ++i)
      moduleName += (i ? "." : "") + parts[i].str();
    PyRef object = importModule(moduleName);
    if (!object)
      continue;
    for (size_t i = n; i < parts.size(); ++i) {
      object = PyRef::steal(PyObject_GetAttrString(object.get(), parts[i].str().c_str()));
      if (!object)
        return pythonError("looking up " + dottedName);
    }
    return object;
  }
  return captureError("cannot import " + dottedName);
}

std::string qualifiedTypeName(PyObject* type) {
  PreserveException preserve;
  PyRef module = PyRef::steal(PyObject_GetAttrString(type, "__module__"));
  PyRef qualname = PyRef::steal(PyObject_GetAttrString(type, "__qualname__"));
  PyErr_Clear();
  std::string name = qualname ? python::utf8Of(qualname.get()).value_or("?") : "?";
  std::string moduleName = module ? python::utf8Of(module.get()).value_or("") : "";
  if (moduleName.empty() || moduleName == "builtins")
    return name;
  return moduleName + "." + name;
}

ir::Guard typeGuard(ir::SourcePtr source, PyObject* type) {
  PreserveException preserve;
  PyRef module = PyRef::steal(PyObject_GetAttrString(type, "__module__"));
  PyRef qualname = PyRef::steal(PyObject_GetAttrString(type, "__qualname__"));
  PyErr_Clear();
  return ir::Guard::type(std::move(source),
                         module ? python::utf8Of(module.get()).value_or("?") : "?",
                         qualname ? python::utf8Of(qualname.get()).value_or("?") : "?");
}

ir::Guard classGuard(ir::SourcePtr source, PyObject* type) {
  ir::Guard guard = typeGuard(std::move(source), type);
  return ir::Guard::classIs(std::move(guard.source), std::move(guard.typeModule),
                            std::move(guard.typeQualname));
}

std::string reprOf(PyObject* object) {
  PreserveException preserve;
  PyRef repr = PyRef::steal(PyObject_Repr(object));
  if (!repr) {
    PyErr_Clear();
    return "<" + qualifiedTypeName(reinterpret_cast<PyObject*>(Py_TYPE(object))) + " object>";
  }
  return python::utf8Of(repr.get()).value_or("?");
}

/// torch's public name for one of its functions (`torch.tensor`), from its
/// own table of its API (dync_oracle_layout); empty for anything else.
static std::string torchPublicName(PyObject* object) {
  // Python's own builtins (abs, len, ...) are never torch's: no call into
  // Python for them, whose names builtin calls spell on every call.
  if (PyCFunction_Check(object)) {
    PyObject* self = PyCFunction_GET_SELF(object);
    const char* module = self && PyModule_Check(self) ? PyModule_GetName(self) : nullptr;
    PyErr_Clear();
    if (module && std::string_view(module) == "builtins")
      return "";
  }
  llvm::Expected<PyRef> layout = oracle::importEmbeddedModule("dync_oracle_layout");
  if (!layout) {
    llvm::consumeError(layout.takeError());
    return "";
  }
  PyRef named = PyRef::steal(PyObject_CallMethod(layout->get(), "_public_name", "O", object));
  PyErr_Clear();
  return named && PyUnicode_Check(named.get()) ? python::utf8Of(named.get()).value_or("") : "";
}

std::string describeObject(PyObject* object) {
  PreserveException preserve;
  if (PyType_Check(object))
    return "class '" + qualifiedTypeName(object) + "'";
  std::string publicName = torchPublicName(object);
  PyRef qualname = PyRef::steal(PyObject_GetAttrString(object, "__qualname__"));
  PyErr_Clear();
  std::string name = !publicName.empty() ? publicName
                     : qualname          ? python::utf8Of(qualname.get()).value_or("")
                                         : "";
  if (PyCFunction_Check(object) && !publicName.empty())
    return "builtin '" + name + "'";
  if (PyCFunction_Check(object)) {
    PyRef module = PyRef::steal(PyObject_GetAttrString(object, "__module__"));
    PyErr_Clear();
    std::string moduleName = module ? python::utf8Of(module.get()).value_or("") : "";
    if (!moduleName.empty() && moduleName != "builtins")
      name = moduleName + "." + name;
    return "builtin '" + name + "'";
  }
  if (!name.empty())
    return "'" + name + "' (" + qualifiedTypeName(reinterpret_cast<PyObject*>(Py_TYPE(object))) +
           ")";
  return "object of type '" + qualifiedTypeName(reinterpret_cast<PyObject*>(Py_TYPE(object))) + "'";
}

std::string sourceLine(const std::string& file, int line) {
  if (file.empty() || line <= 0)
    return "";
  PyRef linecache = PyRef::steal(PyImport_ImportModule("linecache"));
  if (!linecache) {
    PyErr_Clear();
    return "";
  }
  PyRef text =
      PyRef::steal(PyObject_CallMethod(linecache.get(), "getline", "si", file.c_str(), line));
  if (!text) {
    PyErr_Clear();
    return "";
  }
  std::string result = python::utf8Of(text.get()).value_or("");
  while (!result.empty() && (result.back() == '\n' || result.back() == '\r'))
    result.pop_back();
  return result;
}

} // namespace dync::capture
