//===- EntryResolver.cpp - From "Model.forward" to a code object ----------===//
#include "frontend/embedding/EntryResolver.h"

#include "frontend/embedding/NameSuggestions.h"
#include "frontend/embedding/PyStrings.h"
#include "frontend/embedding/PythonError.h"
#include "frontend/embedding/SourceError.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace dync::python {

std::string ResolvedEntry::describe() const {
  std::string inherited = definingClassName.empty() ? "" : ", inherited from " + definingClassName;
  switch (kind) {
  case EntryKind::Function:
    return "function";
  case EntryKind::Method:
    return "method of class " + className + inherited;
  case EntryKind::StaticMethod:
    return "static method of class " + className + inherited;
  case EntryKind::ClassMethod:
    return "class method of class " + className + inherited;
  case EntryKind::BoundMethod:
    return "bound method of '" + ownerPath + "', an instance of " + className + inherited;
  }
  return "function";
}

namespace {

/// Everything resolution needs to phrase errors about the user's module.
class Resolver {
public:
  Resolver(const LoadedModule& module, llvm::StringRef qualname)
      : module_(module), qualname_(qualname) {}

  llvm::Expected<ResolvedEntry> run();

private:
  llvm::Error missing(PyObject* owner, llvm::StringRef ownerPath, llvm::StringRef name);
  llvm::Expected<ResolvedEntry> classify(PyObject* owner, llvm::StringRef ownerPath,
                                         llvm::StringRef name, PyObject* value);
  llvm::Error notAFunction(PyObject* value, llvm::StringRef path);

  std::string describeOwner(PyObject* owner, llvm::StringRef path) const;
  SourceLocation locationOf(PyObject* object) const;
  SourceLocation locationOfCode(PyCodeObject* code) const;
  unsigned classDefinitionLine(PyObject* type) const;

  llvm::Error error(SourceLocation location, const llvm::Twine& message) const {
    return llvm::make_error<SourceError>(std::move(location), message.str());
  }
  SourceLocation fileOnly() const { return SourceLocation{module_.displayPath, 0, 0, 0, ""}; }

  const LoadedModule& module_;
  std::string qualname_;
};

std::string join(llvm::StringRef path, llvm::StringRef name) {
  return path.empty() ? name.str() : (path + "." + name).str();
}

std::string qualnameOf(PyObject* object) {
  PyRef name = PyRef::steal(PyObject_GetAttrString(object, "__qualname__"));
  PyErr_Clear();
  return utf8Of(name.get()).value_or("");
}

/// The attribute \p name as stored in the class dictionaries along the MRO
/// of \p type, before any descriptor runs: how a staticmethod is told apart
/// from a function. Borrowed, or null.
PyObject* lookupRaw(PyObject* type, llvm::StringRef name) {
  if (!PyType_Check(type))
    return nullptr;
  PyObject* mro = reinterpret_cast<PyTypeObject*>(type)->tp_mro;
  if (!mro || !PyTuple_Check(mro))
    return nullptr;
  std::string key = name.str();
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); ++i) {
    PyObject* dict = reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(mro, i))->tp_dict;
    if (PyObject* found = dict ? PyDict_GetItemString(dict, key.c_str()) : nullptr)
      return found;
  }
  return nullptr;
}

/// Whether instances of \p type have a method \p name written in Python.
bool hasPythonMethod(PyObject* type, llvm::StringRef name) {
  PyObject* raw = lookupRaw(type, name);
  return raw && PyFunction_Check(raw);
}

/// A method of \p type worth naming in an example: forward (what a torch
/// module runs), then __call__, then the first function the class itself
/// defines that is not a dunder. Empty if there is none.
std::string exampleMethod(PyObject* type) {
  for (llvm::StringRef preferred : {"forward", "__call__"})
    if (hasPythonMethod(type, preferred))
      return preferred.str();
  PyObject* dict = PyType_Check(type) ? reinterpret_cast<PyTypeObject*>(type)->tp_dict : nullptr;
  PyObject* key = nullptr;
  PyObject* value = nullptr;
  Py_ssize_t position = 0;
  while (dict && PyDict_Next(dict, &position, &key, &value))
    if (PyFunction_Check(value))
      if (auto name = utf8Of(key); name && !llvm::StringRef(*name).starts_with("__"))
        return *name;
  return "";
}

/// Built-in callables implemented in C; none has bytecode to compile.
bool isBuiltinCallable(PyObject* value) {
  if (PyCFunction_Check(value))
    return true;
  llvm::StringRef typeName = Py_TYPE(value)->tp_name;
  return typeName == "method_descriptor" || typeName == "wrapper_descriptor" ||
         typeName == "method-wrapper" || typeName == "classmethod_descriptor" ||
         typeName == "builtin_function_or_method";
}

/// "the built-in function math.sqrt", "the built-in method list.append".
std::string describeBuiltin(PyObject* value) {
  std::string name = qualnameOf(value);
  PyRef module = PyRef::steal(PyObject_GetAttrString(value, "__module__"));
  PyErr_Clear();
  std::optional<std::string> moduleName = utf8Of(module.get());
  if (moduleName && *moduleName != "builtins" && !name.empty())
    name = *moduleName + "." + name;
  bool isFunction = PyCFunction_Check(value) &&
                    (!PyCFunction_GET_SELF(value) || PyModule_Check(PyCFunction_GET_SELF(value)));
  return std::string(isFunction ? "the built-in function " : "the built-in method ") + name;
}

/// "a float", "an int": Python type names read better with an article.
std::string withArticle(llvm::StringRef typeName) {
  bool vowel = !typeName.empty() && llvm::StringRef("aeiouAEIOU").contains(typeName.front());
  return (vowel ? "an '" : "a '") + typeName.str() + "'";
}

llvm::Expected<ResolvedEntry> Resolver::run() {
  llvm::SmallVector<llvm::StringRef, 4> parts;
  llvm::StringRef(qualname_).split(parts, '.');
  PyRef owner = module_.module;
  std::string ownerPath;
  for (size_t i = 0; i < parts.size(); ++i) {
    llvm::StringRef name = parts[i];
    PyRef value = PyRef::steal(PyObject_GetAttrString(owner.get(), name.str().c_str()));
    if (!value)
      return missing(owner.get(), ownerPath, name);
    if (i + 1 == parts.size())
      return classify(owner.get(), ownerPath, name, value.get());
    owner = std::move(value);
    ownerPath = join(ownerPath, name);
  }
  return error(fileOnly(), "empty entry name");
}

/// Called with an exception pending from getattr.
llvm::Error Resolver::missing(PyObject* owner, llvm::StringRef ownerPath, llvm::StringRef name) {
  std::string path = join(ownerPath, name);
  if (!PyErr_ExceptionMatches(PyExc_AttributeError))
    return takePythonError("getting '" + path + "' from '" + module_.displayPath + "'");
  PyObject* type = nullptr;
  PyObject* value = nullptr;
  PyObject* traceback = nullptr;
  PyErr_Fetch(&type, &value, &traceback);
  std::vector<std::string> names = dirOf(owner);
  // Listed but raising AttributeError: a property or __getattr__ failed,
  // and its traceback says why.
  if (llvm::is_contained(names, name)) {
    PyErr_Restore(type, value, traceback);
    return takePythonError("getting '" + path + "' from '" + module_.displayPath + "'");
  }
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(traceback);

  std::string ownerText = describeOwner(owner, ownerPath);
  // A function defined inside another one is a local variable of each call,
  // not an attribute; say so rather than suggesting look-alikes.
  if (PyFunction_Check(owner)) {
    auto* code = reinterpret_cast<PyCodeObject*>(PyFunction_GetCode(owner));
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(code->co_consts); ++i) {
      PyObject* constant = PyTuple_GET_ITEM(code->co_consts, i);
      if (PyCode_Check(constant) &&
          utf8Of(reinterpret_cast<PyCodeObject*>(constant)->co_name) == name.str())
        return error(locationOfCode(reinterpret_cast<PyCodeObject*>(constant)),
                     "'" + name + "' is defined inside " + ownerText +
                         ", so it exists only while '" + ownerPath +
                         "' runs and cannot be an entry; move it to module level");
    }
  }
  return error(PyType_Check(owner) ? locationOf(owner) : fileOnly(),
               ownerText + " has no attribute '" + name + "'" +
                   didYouMean(closestNames(name, names)));
}

llvm::Expected<ResolvedEntry> Resolver::classify(PyObject* owner, llvm::StringRef ownerPath,
                                                 llvm::StringRef name, PyObject* value) {
  ResolvedEntry entry;
  entry.qualname = qualname_;
  entry.ownerPath = ownerPath.str();
  std::string path = join(ownerPath, name);
  PyObject* function = value;

  if (PyMethod_Check(value)) {
    function = PyMethod_GET_FUNCTION(value);
    PyObject* self = PyMethod_GET_SELF(value);
    if (!PyFunction_Check(function))
      return notAFunction(function, path);
    entry.self = PyRef::borrow(self);
    if (PyType_Check(self)) {
      entry.kind = EntryKind::ClassMethod;
      entry.className = qualnameOf(self);
    } else {
      entry.kind = EntryKind::BoundMethod;
      entry.className = qualnameOf(reinterpret_cast<PyObject*>(Py_TYPE(self)));
    }
  } else if (PyFunction_Check(value)) {
    // Reached through a class, or a staticmethod reached through an
    // instance: either way the class's own dictionary says which it is.
    PyObject* type = PyType_Check(owner) ? owner : reinterpret_cast<PyObject*>(Py_TYPE(owner));
    PyObject* raw = PyModule_Check(owner) ? nullptr : lookupRaw(type, name);
    if (raw && Py_IS_TYPE(raw, &PyStaticMethod_Type)) {
      entry.kind = EntryKind::StaticMethod;
      entry.className = qualnameOf(type);
    } else if (PyType_Check(owner)) {
      entry.kind = EntryKind::Method;
      entry.className = qualnameOf(owner);
    } else {
      entry.kind = EntryKind::Function;
    }
  } else {
    return notAFunction(value, path);
  }

  // A method found on a base class says where it is written.
  std::string functionQualname = qualnameOf(function);
  auto [definedIn, ownName] = llvm::StringRef(functionQualname).rsplit('.');
  if (entry.kind != EntryKind::Function && !ownName.empty() && definedIn != entry.className &&
      !definedIn.contains("<locals>"))
    entry.definingClassName = definedIn.str();
  entry.function = PyRef::borrow(function);
  entry.code = PyRef::borrow(PyFunction_GetCode(function));
  return entry;
}

llvm::Error Resolver::notAFunction(PyObject* value, llvm::StringRef path) {
  std::string quoted = "'" + path.str() + "'";
  if (PyType_Check(value)) {
    std::string method = exampleMethod(value);
    return error(locationOf(value),
                 quoted + " is a class, not a function; name one of its methods" +
                     (method.empty() ? std::string(" instead")
                                     : ", e.g. '" + path.str() + "." + method + "'"));
  }
  if (PyModule_Check(value))
    return error(fileOnly(), quoted + " is a module, not a function");
  if (PyObject_TypeCheck(value, &PyProperty_Type))
    return error(fileOnly(), quoted + " is a property, not a function; name its getter, '" +
                                 path.str() + ".fget'");
  if (isBuiltinCallable(value))
    return error(fileOnly(), quoted + " is " + describeBuiltin(value) +
                                 ", implemented in C; it has no Python bytecode to compile");
  std::string typeName = qualnameOf(reinterpret_cast<PyObject*>(Py_TYPE(value)));
  std::string method = exampleMethod(reinterpret_cast<PyObject*>(Py_TYPE(value)));
  if (!method.empty())
    return error(fileOnly(), quoted + " is " + withArticle(typeName) +
                                 " object, not a function; name one of its methods, e.g. '" +
                                 path.str() + "." + method + "'");
  if (PyCallable_Check(value))
    return error(fileOnly(), quoted + " is " + withArticle(typeName) +
                                 " object, not a function, and has no Python bytecode of its own");
  return error(fileOnly(), quoted + " is not a function but a value of type '" + typeName + "'");
}

std::string Resolver::describeOwner(PyObject* owner, llvm::StringRef path) const {
  if (path.empty())
    return "module '" + module_.name + "'";
  if (PyType_Check(owner))
    return "class '" + path.str() + "'";
  if (PyModule_Check(owner))
    return "module '" + path.str() + "'";
  if (PyFunction_Check(owner))
    return "function '" + path.str() + "'";
  return "'" + path.str() + "' (" +
         withArticle(qualnameOf(reinterpret_cast<PyObject*>(Py_TYPE(owner)))) + " object)";
}

SourceLocation Resolver::locationOf(PyObject* object) const {
  SourceLocation location = fileOnly();
  if (PyType_Check(object))
    location.line = classDefinitionLine(object);
  return location;
}

SourceLocation Resolver::locationOfCode(PyCodeObject* code) const {
  SourceLocation location = fileOnly();
  std::string file = utf8Of(code->co_filename).value_or("");
  if (file != module_.absolutePath)
    location.file = file;
  location.line = static_cast<unsigned>(code->co_firstlineno);
  return location;
}

/// Classes keep no line number before Python 3.13, but the body of each class
/// the module defines is a code object inside the module's, under the
/// class's qualified name.
unsigned Resolver::classDefinitionLine(PyObject* type) const {
  PyRef moduleName = PyRef::steal(PyObject_GetAttrString(type, "__module__"));
  PyErr_Clear();
  if (utf8Of(moduleName.get()) != module_.name || !module_.code)
    return 0;
  std::string qualname = qualnameOf(type);
  llvm::SmallVector<PyCodeObject*, 16> pending{reinterpret_cast<PyCodeObject*>(module_.code.get())};
  while (!pending.empty()) {
    PyCodeObject* code = pending.pop_back_val();
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(code->co_consts); ++i) {
      PyObject* constant = PyTuple_GET_ITEM(code->co_consts, i);
      if (!PyCode_Check(constant))
        continue;
      auto* inner = reinterpret_cast<PyCodeObject*>(constant);
      if (utf8Of(inner->co_qualname) == qualname)
        return static_cast<unsigned>(inner->co_firstlineno);
      pending.push_back(inner);
    }
  }
  return 0;
}

} // namespace

llvm::Expected<ResolvedEntry> resolveEntry(const LoadedModule& module, llvm::StringRef qualname) {
  return Resolver(module, qualname).run();
}

} // namespace dync::python
