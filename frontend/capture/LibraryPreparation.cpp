//===- LibraryPreparation.cpp - Libraries torch prepares before tracing ---===//
//
// The registry is `torch._dynamo.trace_rules._lazy_module_init`, keyed by a
// library's top-level package name; `_maybe_init_lazy_module(obj)` runs and
// removes the functions registered for obj's package. Reading the registry
// imports torch._dynamo, which the oracle otherwise puts off: it is done
// only when capture first runs a function of a package other than torch,
// the standard library and the entry's module, and once per package.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/LibraryPreparation.h"

#include "frontend/capture/CaptureError.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/embedding/PyStrings.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"

#include <optional>
#include <string>

namespace dync::capture {

using python::PyRef;

namespace {

/// Whether \p package is one torch's registry can never name: torch itself,
/// a standard-library package, or a name Python gives code it made.
bool neverRegistered(llvm::StringRef package) {
  if (package.empty() || package == "torch" || package == "__main__" || package == "builtins")
    return true;
  PyObject* stdlib = PySys_GetObject("stdlib_module_names"); // borrowed
  if (!stdlib)
    return false;
  PyRef name = PyRef::steal(PyUnicode_FromStringAndSize(package.data(), package.size()));
  int contained = name ? PySet_Contains(stdlib, name.get()) : -1;
  if (contained < 0)
    PyErr_Clear();
  return contained == 1;
}

} // namespace

llvm::Error prepareLibraryForTracing(PyObject* globals) {
  // Packages looked up already, whether or not torch had something to run.
  static llvm::StringSet<> seen;
  PyObject* moduleName = globals && PyDict_Check(globals)
                             ? PyDict_GetItemString(globals, "__name__") // borrowed
                             : nullptr;
  if (!moduleName || !PyUnicode_Check(moduleName))
    return llvm::Error::success();
  std::optional<std::string> name = python::utf8Of(moduleName);
  if (!name)
    return llvm::Error::success();
  llvm::StringRef package = llvm::StringRef(*name).split('.').first;
  if (!seen.insert(package).second || neverRegistered(package))
    return llvm::Error::success();
  // torch._dynamo's package body registers the libraries torch itself
  // prepares (einops); the oracle may have loaded trace_rules without it,
  // and reading one of the body's names runs it.
  llvm::Expected<PyRef> body = importObject("torch._dynamo.allow_in_graph");
  if (!body) {
    llvm::consumeError(body.takeError());
    PyErr_Clear();
  }
  llvm::Expected<PyRef> registry = importObject("torch._dynamo.trace_rules._lazy_module_init");
  if (!registry) {
    // A torch without the registry has nothing to prepare.
    llvm::consumeError(registry.takeError());
    PyErr_Clear();
    return llvm::Error::success();
  }
  PyObject* registered = PyDict_Check(registry->get())
                             ? PyDict_GetItemString(registry->get(), package.str().c_str())
                             : nullptr;
  if (!registered)
    return llvm::Error::success();
  llvm::Expected<PyRef> prepare = importObject("torch._dynamo.trace_rules._maybe_init_lazy_module");
  if (!prepare)
    return prepare.takeError();
  // _maybe_init_lazy_module reads the package from `obj.__module__`.
  PyRef holder = PyRef::steal(PyModule_New("dync_library_preparation"));
  if (!holder || PyModule_AddObjectRef(holder.get(), "__module__", moduleName) < 0)
    return pythonError("preparing package " + package.str() + " for capture");
  PyRef done = PyRef::steal(PyObject_CallOneArg(prepare->get(), holder.get()));
  if (!done)
    return pythonError("running torch's preparation of package " + package.str() +
                       " (torch._dynamo.trace_rules.add_module_init_func)");
  return llvm::Error::success();
}

} // namespace dync::capture
