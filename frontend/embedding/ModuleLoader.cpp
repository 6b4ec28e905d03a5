//===- ModuleLoader.cpp - Importing the user's file as a module -----------===//
#include "frontend/embedding/ModuleLoader.h"

#include "frontend/embedding/PyRef.h"
#include "frontend/embedding/PyStrings.h"
#include "frontend/embedding/PythonError.h"
#include "frontend/embedding/SamePath.h"
#include "frontend/embedding/SourceError.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"

#include <algorithm>

#include <Python.h>

namespace dync::python {

namespace {

llvm::Error error(const llvm::Twine& message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// A positive int attribute of \p object, or 0.
unsigned unsignedAttr(PyObject* object, const char* name) {
  PyRef value = PyRef::steal(PyObject_GetAttrString(object, name));
  long result = value && PyLong_Check(value.get()) ? PyLong_AsLong(value.get()) : 0;
  PyErr_Clear();
  return result > 0 ? static_cast<unsigned>(result) : 0;
}

/// Turns the pending SyntaxError raised while compiling \p displayPath into
/// an error located in that file.
llvm::Error takeSyntaxError(llvm::StringRef displayPath) {
  auto [type, value, traceback] = fetchException();

  SourceLocation location;
  location.file = displayPath.str();
  location.line = unsignedAttr(value.get(), "lineno");
  location.column = unsignedAttr(value.get(), "offset");
  if (unsignedAttr(value.get(), "end_lineno") == location.line)
    location.endColumn = unsignedAttr(value.get(), "end_offset");
  PyRef text = PyRef::steal(PyObject_GetAttrString(value.get(), "text"));
  PyRef message = PyRef::steal(PyObject_GetAttrString(value.get(), "msg"));
  PyErr_Clear();
  location.lineText = llvm::StringRef(utf8Of(text.get()).value_or("")).rtrim("\r\n").str();
  std::string messageText = utf8Of(message.get()).value_or("");
  if (messageText.empty())
    messageText = strOf(value.get());
  return llvm::make_error<SourceError>(std::move(location), std::move(messageText));
}

/// The encoding a PEP 263 cookie in one of the first two lines declares,
/// lower-cased, or "" if there is none.
std::string declaredEncoding(llvm::StringRef source) {
  static const llvm::Regex cookie("^[ \t\f]*#.*coding[:=][ \t]*([-_.a-zA-Z0-9]+)");
  for (int line = 0; line < 2 && !source.empty(); ++line) {
    auto [text, rest] = source.split('\n');
    llvm::SmallVector<llvm::StringRef, 2> matches;
    if (cookie.match(text, &matches))
      return matches[1].lower();
    source = rest;
  }
  return "";
}

/// The source as the compiler should see it. UTF-8 source (the default) is
/// decoded here: compiling a str gives SyntaxError offsets in characters,
/// whereas compiling bytes gives them in bytes. Anything else stays bytes,
/// for the compiler to decode by its cookie (or to report as undecodable).
PyRef sourceObject(llvm::StringRef bytes) {
  llvm::StringRef text = bytes;
  text.consume_front("\xEF\xBB\xBF");
  std::string encoding = declaredEncoding(text);
  std::replace(encoding.begin(), encoding.end(), '_', '-');
  if (encoding.empty() || encoding == "utf-8" || encoding == "utf8" ||
      llvm::StringRef(encoding).starts_with("utf-8-")) {
    if (PyObject* decoded =
            PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "strict"))
      return PyRef::steal(decoded);
    PyErr_Clear();
  }
  return PyRef::steal(
      PyBytes_FromStringAndSize(bytes.data(), static_cast<Py_ssize_t>(bytes.size())));
}

/// Compiles the file the way the import system does: the encoding comes
/// from a BOM or coding cookie, and no compiler flags leak in from dync.
llvm::Expected<PyRef> compileSource(llvm::StringRef displayPath, llvm::StringRef absolutePath) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(displayPath, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return error("cannot read '" + displayPath + "': " + buffer.getError().message());
  PyRef source = sourceObject((*buffer)->getBuffer());
  PyRef filename = PyRef::steal(newStr(absolutePath));
  PyObject* compile = PyDict_GetItemString(PyEval_GetBuiltins(), "compile"); // borrowed
  PyRef args = source && filename && compile
                   ? PyRef::steal(Py_BuildValue("(OOs)", source.get(), filename.get(), "exec"))
                   : PyRef();
  PyRef kwargs = args ? PyRef::steal(Py_BuildValue("{s:O}", "dont_inherit", Py_True)) : PyRef();
  PyRef code = kwargs ? PyRef::steal(PyObject_Call(compile, args.get(), kwargs.get())) : PyRef();
  if (code)
    return code;
  if (PyErr_ExceptionMatches(PyExc_SyntaxError))
    return takeSyntaxError(displayPath);
  return takePythonError(("compiling '" + displayPath + "'").str());
}

/// A module named \p name with the attributes importlib gives a module
/// loaded from \p absolutePath (__spec__, __loader__, __file__, __cached__),
/// so that inspect, pickle and linecache treat it as any imported module.
llvm::Expected<PyRef> createModule(llvm::StringRef name, llvm::StringRef absolutePath) {
  PyRef util = PyRef::steal(PyImport_ImportModule("importlib.util"));
  PyRef nameObject = PyRef::steal(newStr(name));
  PyRef location = PyRef::steal(newStr(absolutePath));
  PyRef spec = util && nameObject && location
                   ? PyRef::steal(PyObject_CallMethod(util.get(), "spec_from_file_location", "OO",
                                                      nameObject.get(), location.get()))
                   : PyRef();
  PyRef module =
      spec ? PyRef::steal(PyObject_CallMethod(util.get(), "module_from_spec", "O", spec.get()))
           : PyRef();
  if (!module)
    return takePythonError("creating the module for '" + absolutePath.str() + "'");
  PyObject* globals = PyModule_GetDict(module.get()); // borrowed
  // exec() adds __builtins__ to the globals of every module it runs; this
  // runs the body directly, so it adds them itself.
  if (!PyDict_GetItemString(globals, "__builtins__") &&
      PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins()) < 0)
    return takePythonError("creating the module for '" + absolutePath.str() + "'");
  return module;
}

llvm::Error prependToSysPath(llvm::StringRef folder) {
  PyObject* path = PySys_GetObject("path"); // borrowed
  PyRef entry = PyRef::steal(newStr(folder));
  if (!path || !PyList_Check(path) || !entry || PyList_Insert(path, 0, entry.get()) < 0) {
    if (PyErr_Occurred())
      return takePythonError("adding '" + folder.str() + "' to sys.path");
    return error("the embedded Python has no sys.path list");
  }
  return llvm::Error::success();
}

/// The module already in sys.modules under \p name, if there is one: null
/// if the name is free, the module if it was imported from \p absolutePath
/// (naming a standard-library file, say), an error otherwise. Replacing
/// another module would break whatever imported it (a file called os.py,
/// say), and `python3` would hand out the existing module instead of the
/// file, so neither is right.
llvm::Expected<PyRef> existingModule(llvm::StringRef name, llvm::StringRef absolutePath,
                                     llvm::StringRef displayPath) {
  PyObject* existing = PyDict_GetItemString(PyImport_GetModuleDict(), name.str().c_str());
  if (!existing)
    return PyRef();
  PyRef file = PyRef::steal(PyObject_GetAttrString(existing, "__file__"));
  PyErr_Clear();
  std::string where = utf8Of(file.get()).value_or("");
  if (!where.empty() && isSamePath(where, absolutePath))
    return PyRef::borrow(existing);
  return error("cannot import '" + displayPath + "' as module '" + name +
               "': Python has already imported a module of that name" +
               (where.empty() ? std::string() : " from '" + where + "'") + "; rename the file");
}

} // namespace

llvm::Error checkModuleFile(llvm::StringRef path) {
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status)) {
    if (ec == std::errc::no_such_file_or_directory)
      return error("no such file: '" + path + "'");
    return error("cannot read '" + path + "': " + ec.message());
  }
  if (llvm::sys::fs::is_directory(status))
    return error("'" + path + "' is a directory, not a Python file");
  if (!llvm::sys::fs::is_regular_file(status))
    return error("'" + path + "' is not a regular file");
  llvm::Expected<llvm::sys::fs::file_t> file = llvm::sys::fs::openNativeFileForRead(path);
  if (!file)
    return error("cannot read '" + path + "': " + llvm::toString(file.takeError()));
  llvm::sys::fs::closeFile(*file);
  return llvm::Error::success();
}

llvm::Expected<LoadedModule> importModuleFromPath(llvm::StringRef path) {
  LoadedModule loaded;
  loaded.displayPath = path.str();
  loaded.name = llvm::sys::path::stem(path).str();
  llvm::SmallString<256> absolute(path);
  llvm::sys::fs::make_absolute(absolute);
  llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
  loaded.absolutePath = absolute.str().str();

  llvm::Expected<PyRef> existing = existingModule(loaded.name, loaded.absolutePath, path);
  if (!existing)
    return existing.takeError();
  llvm::Expected<PyRef> code = compileSource(path, loaded.absolutePath);
  if (!code)
    return code.takeError();
  loaded.code = std::move(*code);
  // Imported already, as `import` would find it: not run a second time.
  if (*existing) {
    loaded.module = std::move(*existing);
    return loaded;
  }
  llvm::Expected<PyRef> module = createModule(loaded.name, loaded.absolutePath);
  if (!module)
    return module.takeError();
  if (llvm::Error error = prependToSysPath(llvm::sys::path::parent_path(loaded.absolutePath)))
    return error;

  PyObject* modules = PyImport_GetModuleDict(); // borrowed
  if (PyDict_SetItemString(modules, loaded.name.c_str(), module->get()) < 0)
    return takePythonError("registering module '" + loaded.name + "'");
  PyObject* globals = PyModule_GetDict(module->get()); // borrowed
  PyRef result = PyRef::steal(PyEval_EvalCode(loaded.code.get(), globals, globals));
  if (!result) {
    llvm::Error error = takePythonError("importing '" + loaded.displayPath + "'");
    // As importlib does: a module whose body failed is not left importable.
    if (PyDict_DelItemString(modules, loaded.name.c_str()) < 0)
      PyErr_Clear();
    return error;
  }
  // The body may have replaced its own sys.modules entry; importlib hands
  // out whatever is there.
  PyObject* registered = PyDict_GetItemString(modules, loaded.name.c_str());
  loaded.module = PyRef::borrow(registered ? registered : module->get());
  return loaded;
}

} // namespace dync::python
