//===- Exceptions.cpp - Python exceptions raised in the captured program --===//
#include "frontend/capture/Exceptions.h"

#include "frontend/capture/PythonHelpers.h"
#include "frontend/embedding/PyStrings.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace dync::capture {

using python::PyRef;

char RaisedException::ID = 0;

void RaisedException::log(llvm::raw_ostream& os) const { os << reason_; }

bool isProgramExceptionType(PyObject* type) {
  if (!type || !PyExceptionClass_Check(type))
    return false;
  // What stops the process is never the program's to catch here.
  for (PyObject* fatal : {PyExc_KeyboardInterrupt, PyExc_SystemExit, PyExc_MemoryError})
    if (PyObject_IsSubclass(type, fatal) == 1)
      return false;
  PyErr_Clear();
  // torch's fake-tensor and symbolic-shape errors say what capture cannot
  // know (values, unbacked sizes, missing fake kernels), not what the
  // program does; the oracle's errors are capture's own, and so is
  // CaptureStopped (dync_capture_objects).
  static constexpr llvm::StringLiteral CaptureModules[] = {
      "torch._subclasses",   "torch.fx.experimental", "torch._dynamo", "torch._guards", "dync",
      "dync_capture_objects"};
  PyObject* mro = reinterpret_cast<PyTypeObject*>(type)->tp_mro;
  for (Py_ssize_t i = 0, e = mro ? PyTuple_GET_SIZE(mro) : 0; i < e; ++i) {
    PyRef module = PyRef::steal(PyObject_GetAttrString(PyTuple_GET_ITEM(mro, i), "__module__"));
    if (!module) {
      PyErr_Clear();
      continue;
    }
    llvm::StringRef name;
    std::optional<std::string> text = python::utf8Of(module.get());
    if (!text)
      continue;
    name = *text;
    for (llvm::StringRef prefix : CaptureModules)
      if (name == prefix || name.starts_with((prefix + ".").str()))
        return false;
    if (name.starts_with("__dync") || name.starts_with("_dync"))
      return false;
  }
  return true;
}

bool isOracleProgramException(PyObject* exception) {
  if (!exception || !PyExceptionInstance_Check(exception))
    return false;
  PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(exception));
  if (!isProgramExceptionType(type) ||
      PyErr_GivenExceptionMatches(exception, PyExc_NotImplementedError))
    return false;
  std::string message = llvm::StringRef(python::strOf(exception)).lower();
  for (llvm::StringRef limit : {"fake", "meta", "data pointer", "data_ptr", "symbolic sizes",
                                "symbolic shape", "unbacked", "data-dependent", "data dependent"})
    if (llvm::StringRef(message).contains(limit))
      return false;
  return true;
}

llvm::Error raiseObject(PyRef exception, const llvm::Twine& uncaughtReason) {
  return llvm::make_error<RaisedException>(makeValue(ValueKind::Object, std::move(exception)),
                                           uncaughtReason.str());
}

llvm::Error programError(const llvm::Twine& what) {
  if (!PyErr_Occurred())
    return pythonError(what);
  PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback);
  if (!value || !PyExceptionInstance_Check(value) || !isProgramExceptionType(type)) {
    PyErr_Restore(type, value, traceback);
    return pythonError(what);
  }
  PyRef typeRef = PyRef::steal(type), valueRef = PyRef::steal(value),
        tracebackRef = PyRef::steal(traceback);
  if (traceback)
    PyException_SetTraceback(value, traceback);
  // The same words pythonError uses, for when nothing catches it.
  std::string reason = what.str();
  std::string message = python::strOf(value);
  reason +=
      (reason.empty() ? "" : ": ") + python::typeDisplayName(reinterpret_cast<PyTypeObject*>(type));
  if (!message.empty())
    reason += ": " + message;
  return raiseObject(std::move(valueRef), reason);
}

llvm::Error raiseBuiltin(PyObject* type, const llvm::Twine& message, const llvm::Twine& what) {
  std::string text = message.str();
  PyRef exception = PyRef::steal(text.empty() ? PyObject_CallNoArgs(type)
                                              : PyObject_CallFunction(type, "s", text.c_str()));
  if (!exception)
    return pythonError("making a " + qualifiedTypeName(type));
  std::string reason = what.str();
  reason +=
      (reason.empty() ? "" : " ") + python::typeDisplayName(reinterpret_cast<PyTypeObject*>(type));
  if (!text.empty())
    reason += ": " + text;
  return raiseObject(std::move(exception), reason);
}

llvm::Error raiseWith(PyObject* type, PyObject* argument, const llvm::Twine& uncaughtReason) {
  PyRef exception = PyRef::steal(PyObject_CallOneArg(type, argument));
  if (!exception)
    return pythonError("making a " + qualifiedTypeName(type));
  return raiseObject(std::move(exception), uncaughtReason);
}

bool catchRaised(llvm::Error& error, PyObject* type) {
  if (!error.isA<RaisedException>())
    return false;
  bool caught = false;
  error = llvm::handleErrors(std::move(error),
                             [&](std::unique_ptr<RaisedException> raised) -> llvm::Error {
                               int matches = PyErr_GivenExceptionMatches(raised->object(), type);
                               if (matches) {
                                 caught = true;
                                 return llvm::Error::success();
                               }
                               return llvm::Error(std::move(raised));
                             });
  return caught;
}

std::optional<bytecode::ExceptionRegion> findExceptionHandler(const bytecode::DecodedCode& code,
                                                              size_t index) {
  // 3.11's table is flat: rows do not overlap and are ordered by start.
  for (const bytecode::ExceptionRegion& region : code.exceptionRegions)
    if (region.start <= index && index < region.end)
      return region;
  return std::nullopt;
}

} // namespace dync::capture
