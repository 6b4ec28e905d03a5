//===- CaptureObjects.cpp - Python objects of values only capture holds ---===//
#include "frontend/capture/CaptureObjects.h"

#include "frontend/capture/PythonHelpers.h"
#include "frontend/oracle/EmbeddedModules.h"

namespace dync::capture {

using python::PyRef;

llvm::Expected<PyRef> captureObjectsModule() {
  return oracle::importEmbeddedModule("dync_capture_objects");
}

llvm::Expected<PyRef> captureObject(llvm::StringRef name) {
  llvm::Expected<PyRef> module = captureObjectsModule();
  if (!module)
    return module.takeError();
  PyRef object = PyRef::steal(PyObject_GetAttrString(module->get(), name.str().c_str()));
  if (!object)
    return pythonError("reading " + name.str() + " of capture's own Python objects");
  return object;
}

} // namespace dync::capture
