//===- NamedObjects.cpp - Objects the rewritten code imports by name -----===//
//
// The name is what the object says of itself (`__module__` and
// `__qualname__`; an enum member's is its class's and its own name; a
// module's is its `__name__`), and it is kept only if walking it from the
// module gives back the very same object now, at export: the rewritten code
// walks the same name at run time (RewrittenCode.cpp), so a class made
// inside a function (`<locals>` in its name) or a function rebound on its
// module is refused here rather than found wrong later.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/NamedObjects.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/embedding/PyStrings.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

namespace dync::capture {

using python::PyRef;

namespace {

/// The str attribute \p name of \p object, or nullopt.
std::optional<std::string> strAttribute(PyObject* object, const char* name) {
  PyRef value = PyRef::steal(PyObject_GetAttrString(object, name));
  std::optional<std::string> text =
      value && PyUnicode_Check(value.get()) ? python::utf8Of(value.get()) : std::nullopt;
  PyErr_Clear();
  return text;
}

/// enum.Enum (borrowed; enum keeps it), or null.
PyObject* enumType() {
  static PyObject* type = [] {
    PyRef module = PyRef::steal(PyImport_ImportModule("enum"));
    PyRef found = module ? PyRef::steal(PyObject_GetAttrString(module.get(), "Enum")) : PyRef();
    PyErr_Clear();
    return found.release();
  }();
  return type;
}

/// The module and qualified name \p object gives itself, or nullopt when it
/// is not an object of a kind found by name.
std::optional<std::pair<std::string, std::string>> ownName(PyObject* object) {
  if (PyModule_Check(object)) {
    const char* name = PyModule_GetName(object);
    PyErr_Clear();
    if (!name)
      return std::nullopt;
    return std::make_pair(std::string(name), std::string());
  }
  PyObject* enumClass = enumType();
  if (!PyType_Check(object) && enumClass && PyObject_IsInstance(object, enumClass) == 1) {
    PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(object));
    std::optional<std::string> module = strAttribute(type, "__module__");
    std::optional<std::string> qualname = strAttribute(type, "__qualname__");
    std::optional<std::string> member = strAttribute(object, "_name_");
    if (!module || !qualname || !member)
      return std::nullopt;
    return std::make_pair(*module, *qualname + "." + *member);
  }
  PyErr_Clear();
  if (!PyType_Check(object) && !PyFunction_Check(object) && !PyCFunction_Check(object))
    return std::nullopt;
  // A built-in method bound to an object (`[].append`) has no name that
  // leads back to it.
  if (PyCFunction_Check(object) && PyCFunction_GET_SELF(object) &&
      !PyModule_Check(PyCFunction_GET_SELF(object)))
    return std::nullopt;
  std::optional<std::string> module = strAttribute(object, "__module__");
  std::optional<std::string> qualname = strAttribute(object, "__qualname__");
  if (!module || !qualname)
    return std::nullopt;
  return std::make_pair(*module, *qualname);
}

/// What the rewritten code finds walking \p module and \p qualname:
/// `import <module>` gives its top-level package, then each further part
/// is an attribute. Null (no error set) when the walk fails.
PyRef findByName(const std::string& module, const std::string& qualname) {
  PyRef imported = PyRef::steal(PyImport_ImportModule(module.c_str()));
  llvm::SmallVector<llvm::StringRef> parts;
  llvm::StringRef(module).split(parts, '.');
  if (!qualname.empty())
    llvm::StringRef(qualname).split(parts, '.');
  PyRef found =
      imported ? PyRef::steal(PyImport_ImportModule(parts.front().str().c_str())) : PyRef();
  for (llvm::StringRef part : llvm::ArrayRef(parts).drop_front())
    if (found)
      found = PyRef::steal(PyObject_GetAttrString(found.get(), part.str().c_str()));
  PyErr_Clear();
  return found;
}

} // namespace

llvm::Expected<std::optional<ir::Argument>> namedArgument(PyObject* object) {
  std::optional<std::pair<std::string, std::string>> name = ownName(object);
  if (!name)
    return std::nullopt;
  auto& [module, qualname] = *name;
  std::string spelled = module + (qualname.empty() ? "" : "." + qualname);
  const char* what = PyModule_Check(object)     ? "module"
                     : PyType_Check(object)     ? "class"
                     : PyCallable_Check(object) ? "function"
                                                : "enum member";
  if (module.empty() || llvm::StringRef(qualname).contains("<"))
    return captureError(std::string("the ") + what + " " + spelled +
                        " has no name the rewritten code can import it by (a lambda, or made "
                        "inside a function); define it at module level");
  PyRef found = findByName(module, qualname);
  if (found.get() != object)
    return captureError(std::string("the ") + what + " " + spelled +
                        " is not what its module and qualified name lead to now (" +
                        (found ? "they lead to another object" : "they lead nowhere") +
                        "), so the rewritten code cannot import it by that name");
  return std::optional<ir::Argument>(ir::Argument::named(module, qualname));
}

} // namespace dync::capture
