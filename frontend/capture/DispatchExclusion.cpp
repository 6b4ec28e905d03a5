//===- DispatchExclusion.cpp - Blocks that switch off torch's dispatch modes ===//
#include "frontend/capture/DispatchExclusion.h"

#include "frontend/capture/CaptureError.h"
#include "frontend/capture/CaptureObjects.h"

namespace dync::capture {

using python::PyRef;

namespace {

/// The stand-in class and the exit function (capture_objects.py), read once
/// per process and kept for its lifetime (never released: they may outlive
/// the interpreter's finalization otherwise).
struct StandIns {
  PyObject* cls = nullptr;
  PyObject* exit = nullptr;
};

llvm::Expected<StandIns> standIns() {
  static StandIns made;
  if (made.cls)
    return made;
  llvm::Expected<PyRef> cls = captureObject("DispatchExclusionStandIn");
  if (!cls)
    return cls.takeError();
  llvm::Expected<PyRef> exit = captureObject("exit_dispatch_exclusion");
  if (!exit)
    return exit.takeError();
  made = {Py_NewRef(cls->get()), Py_NewRef(exit->get())};
  return made;
}

} // namespace

bool isDispatchExclusionClass(PyObject* cls) {
  if (!cls || !PyType_Check(cls))
    return false;
  PyObject* torchC = PyDict_GetItemString(PyImport_GetModuleDict(), "torch._C"); // borrowed
  if (!torchC)
    return false;
  for (const char* name : {"_DisableTorchDispatch", "_DisableFuncTorch", "DisableTorchFunction",
                           "DisableTorchFunctionSubclass"}) {
    PyObject* candidate = PyObject_GetAttrString(torchC, name);
    if (!candidate) {
      PyErr_Clear();
      continue;
    }
    Py_DECREF(candidate); // the module keeps it alive
    if (candidate == cls)
      return true;
  }
  return false;
}

llvm::Expected<PyRef> makeDispatchExclusionStandIn() {
  llvm::Expected<StandIns> made = standIns();
  if (!made)
    return made.takeError();
  PyRef standIn = PyRef::steal(PyObject_CallNoArgs(made->cls));
  if (!standIn) {
    PyErr_Clear();
    return captureError("making a stand-in for torch's dispatch-exclusion block failed");
  }
  return standIn;
}

bool isDispatchExclusionStandIn(PyObject* object) {
  llvm::Expected<StandIns> made = standIns();
  if (!made) {
    llvm::consumeError(made.takeError());
    return false;
  }
  return object && reinterpret_cast<PyObject*>(Py_TYPE(object)) == made->cls;
}

llvm::Expected<PyRef> dispatchExclusionExit() {
  llvm::Expected<StandIns> made = standIns();
  if (!made)
    return made.takeError();
  return PyRef::borrow(made->exit);
}

bool isDispatchExclusionExit(PyObject* object) {
  llvm::Expected<StandIns> made = standIns();
  if (!made) {
    llvm::consumeError(made.takeError());
    return false;
  }
  return object && object == made->exit;
}

} // namespace dync::capture
