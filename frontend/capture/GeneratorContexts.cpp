//===- GeneratorContexts.cpp - @contextlib.contextmanager in `with` -------===//
//
// A context manager made by @contextlib.contextmanager is a generator that
// must stop at its yield while the `with` block runs and go on after it
// (`with freeze_rng_state(): ...` saves a state before the block and
// restores it after). Capture otherwise runs generators to their end when
// called, so calling such a factory is captured here instead: the
// generator function gets a frame of its own, set to pause at each yield
// (Frame::pauseAtYield), and the call returns a marker object whose
// __enter__ runs the frame up to its yield (giving what it yields) and
// whose __exit__ runs it on to its end, as contextlib's own __enter__ and
// __exit__ do with next(). The marker's methods are real Python functions,
// so `with` enters it as any context manager written in Python; calls of
// them come here by identity.
//
// An exception leaving the block would have to be thrown into the
// generator at its yield; that is refused, as is a generator that yields
// twice (contextlib raises "generator didn't stop"). The frames live
// outside the recorder's checkpoints, so making one is irreversible.
//
//===----------------------------------------------------------------------===//

#include "frontend/capture/CaptureError.h"
#include "frontend/capture/CaptureObjects.h"
#include "frontend/capture/Interpreter.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/embedding/PyStrings.h"

#include <map>

namespace dync::capture {

using python::PyRef;

struct GeneratorContext {
  std::unique_ptr<Frame> frame;
  std::string qualname;
  bool entered = false;
  bool finished = false;
};

struct GeneratorContexts {
  /// contextlib.contextmanager's wrapper's code, shared by every factory it
  /// made; the marker class and its two methods.
  PyRef factoryCode;
  PyRef markerClass;
  PyObject* enter = nullptr;
  PyObject* exit = nullptr;
  /// By marker object, which the map keeps alive.
  std::map<PyObject*, std::pair<PyRef, GeneratorContext>> contexts;
};

namespace {

llvm::Expected<std::shared_ptr<GeneratorContexts>> makeContexts() {
  // The marker class and the factory's code (capture_objects.py).
  llvm::Expected<PyRef> factoryCode = captureObject("CONTEXT_FACTORY_CODE");
  if (!factoryCode)
    return factoryCode.takeError();
  llvm::Expected<PyRef> markerClass = captureObject("ContextManagerGenerator");
  if (!markerClass)
    return markerClass.takeError();
  auto contexts = std::make_shared<GeneratorContexts>();
  contexts->factoryCode = std::move(*factoryCode);
  contexts->markerClass = std::move(*markerClass);
  PyObject* classDict = reinterpret_cast<PyTypeObject*>(contexts->markerClass.get())->tp_dict;
  contexts->enter = PyDict_GetItemString(classDict, "__enter__");
  contexts->exit = PyDict_GetItemString(classDict, "__exit__");
  if (!contexts->enter || !contexts->exit)
    return captureError("setting up @contextlib.contextmanager contexts failed");
  return contexts;
}

} // namespace

llvm::Expected<std::optional<ValuePtr>>
Interpreter::callGeneratorContext(const ValuePtr& callee, std::vector<ValuePtr>& args,
                                  KeywordArgs& kwargs) {
  PyObject* object = callee->object.get();
  if (!object)
    return std::nullopt;
  // Which function is called, and on what: a method bound for real (the
  // marker's __exit__ read as a real attribute) carries its own self.
  PyObject* function = object;
  PyObject* self = nullptr;
  if (callee->kind != ValueKind::Function) {
    if (!PyMethod_Check(object))
      return std::nullopt;
    function = PyMethod_GET_FUNCTION(object);
    self = PyMethod_GET_SELF(object);
  }
  if (!PyFunction_Check(function))
    return std::nullopt;
  if (!generatorContexts_) {
    // Only a program that imported contextlib can call its factories.
    if (!PyDict_GetItemString(PyImport_GetModuleDict(), "contextlib"))
      return std::nullopt;
    llvm::Expected<std::shared_ptr<GeneratorContexts>> made = makeContexts();
    if (!made)
      return made.takeError();
    generatorContexts_ = std::move(*made);
  }
  GeneratorContexts& contexts = *generatorContexts_;

  if (function == contexts.enter || function == contexts.exit) {
    ValuePtr selfValue;
    if (!self) {
      if (args.empty())
        return captureError("a context's " +
                            llvm::Twine(function == contexts.enter ? "__enter__" : "__exit__") +
                            " called without the context");
      selfValue = args.front();
      args.erase(args.begin());
      self = selfValue->object.get();
    }
    auto found = contexts.contexts.find(self);
    if (found == contexts.contexts.end())
      return captureError("a @contextlib.contextmanager context capture did not make");
    GeneratorContext& context = found->second.second;
    if (function == contexts.enter) {
      if (context.entered)
        return captureError("entering the context of " + context.qualname +
                            "() a second time is not supported");
      context.entered = true;
      llvm::Expected<ValuePtr> yielded = machine_.run(*context.frame);
      if (!yielded)
        return yielded.takeError();
      if (!context.frame->paused)
        return captureError(context.qualname + "() did not yield (eager raises RuntimeError: "
                                               "generator didn't yield)");
      return std::optional<ValuePtr>(*yielded);
    }
    if (!context.entered || context.finished)
      return captureError("leaving the context of " + context.qualname +
                          "() that is not entered is not supported");
    if (args.empty() || !args.front()->isNone()) {
      // Which exception, in the program's words: it is often the program's
      // own error, raised inside the block.
      std::string raised;
      PyObject* error = args.size() > 1 ? args[1]->object.get() : nullptr;
      if (error && PyExceptionInstance_Check(error))
        raised = " (" + python::typeDisplayName(Py_TYPE(error)) + ": " + python::strOf(error) + ")";
      return captureError("an exception leaving a 'with' block on " + context.qualname +
                          "() (made by @contextlib.contextmanager) is not supported yet: capture "
                          "does not throw it into the generator at its yield" +
                          raised);
    }
    context.finished = true;
    context.frame->paused = false;
    llvm::Expected<ValuePtr> resumed = machine_.run(*context.frame);
    if (!resumed)
      return resumed.takeError();
    if (context.frame->paused)
      return captureError(context.qualname + "() yielded a second time (eager raises "
                                             "RuntimeError: generator didn't stop)");
    return std::optional<ValuePtr>(makeConstant(PyRef::borrow(Py_False)));
  }

  // A factory contextlib.contextmanager made: its __wrapped__ is the
  // generator function.
  if (callee->kind != ValueKind::Function ||
      PyFunction_GET_CODE(function) != contexts.factoryCode.get())
    return std::nullopt;
  llvm::Expected<ValuePtr> wrapped = semantics_.getAttr(callee, "__wrapped__");
  if (!wrapped)
    return wrapped.takeError();
  if ((*wrapped)->kind != ValueKind::Function || !(*wrapped)->code ||
      !(reinterpret_cast<PyCodeObject*>((*wrapped)->code.get())->co_flags & CO_GENERATOR))
    return std::nullopt;
  if (llvm::Error refused = recorder_.irreversible("making a @contextlib.contextmanager context"))
    return refused;
  llvm::Expected<std::unique_ptr<Frame>> frame =
      pausedFrame(*wrapped, std::move(args), std::move(kwargs));
  if (!frame)
    return frame.takeError();
  PyRef marker = PyRef::steal(PyObject_CallNoArgs(contexts.markerClass.get()));
  if (!marker)
    return pythonError("making a @contextlib.contextmanager context");
  GeneratorContext context;
  context.frame = std::move(*frame);
  context.qualname = (*wrapped)->qualname;
  PyObject* key = marker.get();
  contexts.contexts.emplace(key, std::make_pair(marker, std::move(context)));
  return std::optional<ValuePtr>(makeValue(ValueKind::Object, marker));
}

} // namespace dync::capture
