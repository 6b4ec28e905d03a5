//===- DispatchExclusion.cpp - Blocks that switch off torch's dispatch modes ===//
#include "frontend/capture/DispatchExclusion.h"

#include "frontend/capture/CaptureError.h"

namespace dync::capture {

using python::PyRef;

namespace {

constexpr const char* StandInSource = R"(
class DispatchExclusionStandIn:
    """torch._C._DisableTorchDispatch() or _DisableFuncTorch() made while
    capturing: the real objects switch dispatch keys off when made."""

    __slots__ = ()


def exit_block(*exception):
    return None
)";

/// The stand-in class and the exit function, made once per process and
/// kept for its lifetime (never released: they may outlive the interpreter's
/// finalization otherwise).
struct StandIns {
  PyObject* cls = nullptr;
  PyObject* exit = nullptr;
};

llvm::Expected<StandIns> standIns() {
  static StandIns made;
  if (made.cls)
    return made;
  PyRef code =
      PyRef::steal(Py_CompileString(StandInSource, "<dync DispatchExclusion>", Py_file_input));
  PyRef globals = PyRef::steal(PyDict_New());
  if (!code || !globals ||
      PyDict_SetItemString(globals.get(), "__builtins__", PyEval_GetBuiltins()) < 0 ||
      PyDict_SetItemString(globals.get(), "__name__",
                           PyRef::steal(PyUnicode_FromString("dync_capture")).get()) < 0) {
    PyErr_Clear();
    return captureError("setting up torch's dispatch-exclusion blocks failed");
  }
  PyRef ran = PyRef::steal(PyEval_EvalCode(code.get(), globals.get(), globals.get()));
  PyObject* cls = PyDict_GetItemString(globals.get(), "DispatchExclusionStandIn");
  PyObject* exit = PyDict_GetItemString(globals.get(), "exit_block");
  if (!ran || !cls || !exit) {
    PyErr_Clear();
    return captureError("setting up torch's dispatch-exclusion blocks failed");
  }
  Py_INCREF(cls);
  Py_INCREF(exit);
  made = {cls, exit};
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
