//===- NamedTupleFactory.cpp - collections.namedtuple called in a function -===//
//
// `collections.namedtuple("VggOutputs", [...])` inside a forward (LPIPS's
// feature extractors) makes a new class on every call. Its body is built
// by CPython's own machinery (sys.intern, eval of a generated __new__),
// which capture cannot follow. The class depends only on the call's
// arguments, so when they are known while capturing it is made for real,
// as eager makes it, with `module` defaulting to the calling function's
// module as CPython's frame lookup gives it; its objects are then built and
// read as those of any named tuple class.
//
//===----------------------------------------------------------------------===//

#include "frontend/capture/BuiltinContext.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/Frame.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/capture/SymbolicText.h"

namespace dync::capture {

using python::PyRef;

namespace {

llvm::Expected<ValuePtr> collectionsNamedtuple(BuiltinContext& interp, const ValuePtr& self,
                                               std::vector<ValuePtr>& args, KeywordArgs& kwargs) {
  bool known = llvm::all_of(args, isKnown) &&
               llvm::all_of(kwargs, [](const auto& kw) { return isKnown(kw.second); });
  bool symbolic =
      llvm::any_of(args, holdsSymbolicNumber) ||
      llvm::any_of(kwargs, [](const auto& kw) { return holdsSymbolicNumber(kw.second); });
  if (!known || symbolic)
    return captureError("collections.namedtuple() is called with a type name, field names or "
                        "defaults known only when the graph runs; a class cannot be made from "
                        "them while capturing: pass constants, or make the class at module level");
  llvm::Expected<BuiltinContext::PythonCallArguments> real = interp.toPythonArguments(args, kwargs);
  if (!real)
    return real.takeError();
  // CPython names the class's module after the caller's globals; the caller
  // here is the program's function, whose frame capture runs.
  bool hasModule = llvm::any_of(kwargs, [](const auto& kw) { return kw.first == "module"; });
  Frame* frame = interp.currentFrame();
  if (!hasModule && frame && frame->globals)
    if (PyObject* name = PyDict_GetItemString(frame->globals, "__name__")) {
      if (!real->kwargs)
        real->kwargs = PyRef::steal(PyDict_New());
      if (!real->kwargs || PyDict_SetItemString(real->kwargs.get(), "module", name) < 0)
        return pythonError("naming a named tuple class's module");
    }
  PyRef type =
      PyRef::steal(PyObject_Call(self->object.get(), real->args.get(), real->kwargs.get()));
  if (!type)
    return programError("calling collections.namedtuple");
  return interp.wrapFake(type.get());
}

} // namespace

llvm::Error registerNamedTupleFactory(BuiltinContext& interp) {
  PyRef collections = PyRef::steal(PyImport_ImportModule("collections"));
  PyRef factory =
      collections ? PyRef::steal(PyObject_GetAttrString(collections.get(), "namedtuple")) : PyRef();
  if (!factory)
    return pythonError("importing collections.namedtuple");
  addBuiltin(interp, factory.get(), collectionsNamedtuple);
  return llvm::Error::success();
}

} // namespace dync::capture
