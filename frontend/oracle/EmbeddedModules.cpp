//===- EmbeddedModules.cpp - Python modules compiled into dync ------------===//
#include "frontend/oracle/EmbeddedModules.h"

#include "frontend/embedding/PythonError.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"

namespace dync::oracle {

namespace {

struct EmbeddedSource {
  const char* name;
  const char* source;
};

constexpr EmbeddedSource embeddedSources[] = {
#include "frontend/EmbeddedPythonSources.inc"
};

} // namespace

llvm::Expected<python::PyRef> importEmbeddedModule(llvm::StringRef name) {
  using python::PyRef;
  std::string moduleName = name.str();
  PyObject* modules = PyImport_GetModuleDict();
  if (PyObject* loaded = PyDict_GetItemString(modules, moduleName.c_str()))
    return PyRef::borrow(loaded);

  const auto* entry =
      llvm::find_if(embeddedSources, [&](const EmbeddedSource& e) { return name == e.name; });
  if (entry == std::end(embeddedSources))
    return llvm::createStringError("dync has no embedded Python module '" + moduleName + "'");
  // A "<dync ...>" file name marks the frames as dync's own, which
  // tracebacks shown to the user leave out.
  std::string fileName = "<dync " + moduleName + ">";
  PyRef code = PyRef::steal(Py_CompileString(entry->source, fileName.c_str(), Py_file_input));
  if (!code)
    return python::takePythonError("compiling " + llvm::Twine(moduleName));
  // Registers the module in sys.modules before running it (dataclasses look
  // their module up there) and removes it again if running fails.
  PyRef module =
      PyRef::steal(PyImport_ExecCodeModuleEx(moduleName.c_str(), code.get(), fileName.c_str()));
  if (!module)
    return python::takePythonError("loading " + llvm::Twine(moduleName));
  return module;
}

} // namespace dync::oracle
