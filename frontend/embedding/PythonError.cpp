//===- PythonError.cpp - Python exceptions as llvm::Error ------------------===//
#include "frontend/embedding/PythonError.h"

#include "frontend/embedding/PyRef.h"
#include "frontend/embedding/PyStrings.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/raw_ostream.h"

#include <Python.h>

#include <vector>

namespace dync::python {

char PythonException::ID = 0;

void PythonException::log(llvm::raw_ostream& os) const {
  if (!context_.empty())
    os << context_ << " raised ";
  os << typeName_;
  if (!message_.empty())
    os << ": " << message_;
}

namespace {

/// Frames the user did not write and cannot act on: CPython's import
/// machinery (it elides these itself when it prints a traceback) and any
/// Python code dync runs on the user's behalf, which is compiled under a
/// "<dync...>" file name.
bool isGlueFrame(PyObject* traceback) {
  auto* entry = reinterpret_cast<PyTracebackObject*>(traceback);
  PyRef code = PyRef::steal(reinterpret_cast<PyObject*>(PyFrame_GetCode(entry->tb_frame)));
  std::optional<std::string> file =
      utf8Of(reinterpret_cast<PyCodeObject*>(code.get())->co_filename);
  if (!file)
    return false;
  llvm::StringRef name(*file);
  return name.starts_with("<frozen importlib._bootstrap") || name.starts_with("<dync");
}

/// Relinks \p traceback so that it skips glue frames; returns the new head
/// (None when nothing is left).
PyRef trimTraceback(PyObject* traceback) {
  std::vector<PyRef> kept;
  for (PyObject* entry = traceback; entry && PyTraceBack_Check(entry);
       entry = reinterpret_cast<PyObject*>(reinterpret_cast<PyTracebackObject*>(entry)->tb_next))
    if (!isGlueFrame(entry))
      kept.push_back(PyRef::borrow(entry));
  for (size_t i = 0; i < kept.size(); ++i) {
    PyObject* next = i + 1 < kept.size() ? kept[i + 1].get() : Py_None;
    if (PyObject_SetAttrString(kept[i].get(), "tb_next", next) < 0)
      PyErr_Clear();
  }
  return PyRef::borrow(kept.empty() ? Py_None : kept.front().get());
}

/// Trims the traceback of \p exception and of every exception chained to it;
/// returns whether any of them still has a frame to show.
bool trimChain(PyObject* exception, llvm::SmallPtrSetImpl<PyObject*>& seen) {
  if (!exception || exception == Py_None || !PyExceptionInstance_Check(exception) ||
      !seen.insert(exception).second)
    return false;
  PyRef traceback = PyRef::steal(PyException_GetTraceback(exception));
  bool hasFrames = false;
  if (traceback) {
    PyRef trimmed = trimTraceback(traceback.get());
    PyException_SetTraceback(exception, trimmed.get());
    hasFrames = trimmed.get() != Py_None;
  }
  PyRef cause = PyRef::steal(PyException_GetCause(exception));
  PyRef context = PyRef::steal(PyException_GetContext(exception));
  hasFrames |= trimChain(cause.get(), seen);
  hasFrames |= trimChain(context.get(), seen);
  return hasFrames;
}

/// Python's own rendering of \p exception and its chain, as `python3` would
/// print it; empty if the traceback module fails.
std::string formatException(PyObject* exception) {
  PyRef module = PyRef::steal(PyImport_ImportModule("traceback"));
  PyRef lines =
      module ? PyRef::steal(PyObject_CallMethod(module.get(), "format_exception", "O", exception))
             : PyRef();
  PyRef empty = PyRef::steal(PyUnicode_FromString(""));
  PyRef joined = lines && empty ? PyRef::steal(PyUnicode_Join(empty.get(), lines.get())) : PyRef();
  if (!joined) {
    PyErr_Clear();
    return "";
  }
  return utf8Of(joined.get()).value_or("");
}

} // namespace

llvm::Error takePythonError(const llvm::Twine& context) {
  if (!PyErr_Occurred())
    return llvm::make_error<PythonException>("SystemError", "failed without setting an exception",
                                             "", context.str());
  auto [type, value, traceback] = fetchException();
  if (traceback && value)
    PyException_SetTraceback(value.get(), traceback.get());

  std::string typeName = type && PyType_Check(type.get())
                             ? typeDisplayName(reinterpret_cast<PyTypeObject*>(type.get()))
                             : "<unknown exception>";
  std::string message = value ? strOf(value.get()) : "";
  std::string formatted;
  llvm::SmallPtrSet<PyObject*, 8> seen;
  if (value && trimChain(value.get(), seen))
    formatted = formatException(value.get());
  return llvm::make_error<PythonException>(std::move(typeName), std::move(message),
                                           std::move(formatted), context.str());
}

} // namespace dync::python
