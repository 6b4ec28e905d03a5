//===- EmbeddedModules.cpp - Python modules compiled into dync ------------===//
#include "frontend/oracle/EmbeddedModules.h"

#include "frontend/embedding/PythonError.h"

#include <marshal.h>

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

/// The same modules compiled by the build (cmake/EmbedPythonCode.py):
/// marshalled code objects, and the magic number of the bytecode they hold.
struct EmbeddedCode {
  const char* name;
  const char* data;
  Py_ssize_t size;
};

constexpr EmbeddedCode embeddedCodes[] = {
#include "frontend/EmbeddedPythonCode.inc"
};

/// Whether the running interpreter reads the build's bytecode: compiling
/// every embedded module from source took a third of a warm capture, and
/// unmarshalling is several times cheaper. Under -O the sources are compiled
/// (the build compiled them unoptimized).
bool buildCodeUsable() {
  if (PyImport_GetMagicNumber() != DYNC_EMBEDDED_CODE_MAGIC)
    return false;
  PyObject* flags = PySys_GetObject("flags");
  python::PyRef optimize =
      python::PyRef::steal(flags ? PyObject_GetAttrString(flags, "optimize") : nullptr);
  if (!optimize) {
    PyErr_Clear();
    return false;
  }
  return PyLong_Check(optimize.get()) && PyLong_AsLong(optimize.get()) == 0;
}

/// The finder module's own code object: the build's when usable, else
/// compiled from \p source.
python::PyRef finderCode(const EmbeddedSource& source, const char* fileName) {
  using python::PyRef;
  if (buildCodeUsable())
    for (const EmbeddedCode& code : embeddedCodes)
      if (llvm::StringRef(code.name) == source.name)
        return PyRef::steal(PyMarshal_ReadObjectFromString(code.data, code.size));
  return PyRef::steal(Py_CompileString(source.source, fileName, Py_file_input));
}

/// The embedded module that lets the others import one another
/// (embedded/embedded_modules.py); run from its source, as it cannot be
/// imported before it is installed.
constexpr llvm::StringLiteral finderModuleName = "dync_embedded_modules";

const EmbeddedSource* findEmbeddedSource(llvm::StringRef name) {
  const auto* entry =
      llvm::find_if(embeddedSources, [&](const EmbeddedSource& e) { return name == e.name; });
  return entry == std::end(embeddedSources) ? nullptr : entry;
}

/// Installs the finder of the embedded modules on sys.meta_path, once per
/// interpreter: its module in sys.modules says it is.
llvm::Error installEmbeddedModuleFinder() {
  using python::PyRef;
  PyObject* modules = PyImport_GetModuleDict();
  if (PyDict_GetItemString(modules, finderModuleName.data()))
    return llvm::Error::success();
  const EmbeddedSource* finder = findEmbeddedSource(finderModuleName);
  if (!finder)
    return llvm::createStringError("dync has no embedded Python module '" + finderModuleName.str() +
                                   "'");
  // A "<dync ...>" file name marks the frames as dync's own, which
  // tracebacks shown to the user leave out.
  std::string fileName = "<dync " + finderModuleName.str() + ">";
  PyRef code = finderCode(*finder, fileName.c_str());
  if (!code)
    return python::takePythonError("compiling " + llvm::Twine(finderModuleName));
  PyRef module = PyRef::steal(
      PyImport_ExecCodeModuleEx(finderModuleName.data(), code.get(), fileName.c_str()));
  if (!module)
    return python::takePythonError("loading " + llvm::Twine(finderModuleName));
  // Until the finder is installed, the module is not kept: the next
  // import tries again.
  auto fail = [&](const char* what) {
    llvm::Error error = python::takePythonError(what);
    if (PyDict_DelItemString(modules, finderModuleName.data()) != 0)
      PyErr_Clear();
    return error;
  };
  PyRef sources = PyRef::steal(PyDict_New());
  if (!sources)
    return fail("collecting the embedded modules' sources");
  for (const EmbeddedSource& entry : embeddedSources) {
    PyRef text = PyRef::steal(PyUnicode_FromString(entry.source));
    if (!text || PyDict_SetItemString(sources.get(), entry.name, text.get()) != 0)
      return fail("collecting the embedded modules' sources");
  }
  PyRef codes = PyRef::steal(PyDict_New());
  if (!codes)
    return fail("collecting the embedded modules' code");
  if (buildCodeUsable())
    for (const EmbeddedCode& entry : embeddedCodes) {
      PyRef data = PyRef::steal(PyBytes_FromStringAndSize(entry.data, entry.size));
      if (!data || PyDict_SetItemString(codes.get(), entry.name, data.get()) != 0)
        return fail("collecting the embedded modules' code");
    }
  PyRef installed =
      PyRef::steal(PyObject_CallMethod(module.get(), "install", "OO", sources.get(), codes.get()));
  if (!installed)
    return fail("installing the embedded modules' finder");
  return llvm::Error::success();
}

} // namespace

llvm::Expected<python::PyRef> importEmbeddedModule(llvm::StringRef name) {
  using python::PyRef;
  std::string moduleName = name.str();
  PyObject* modules = PyImport_GetModuleDict();
  if (PyObject* loaded = PyDict_GetItemString(modules, moduleName.c_str()))
    return PyRef::borrow(loaded);

  if (!findEmbeddedSource(name))
    return llvm::createStringError("dync has no embedded Python module '" + moduleName + "'");
  if (llvm::Error error = installEmbeddedModuleFinder())
    return error;
  // Imported as any module, through the finder: registered in sys.modules
  // before it runs (dataclasses look their module up there), removed again
  // if running fails, and free to import the other embedded modules.
  PyRef module = PyRef::steal(PyImport_ImportModule(moduleName.c_str()));
  if (!module)
    return python::takePythonError("loading " + llvm::Twine(moduleName));
  return module;
}

} // namespace dync::oracle
