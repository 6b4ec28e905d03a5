//===- OpcodesExceptions.cpp - raise, try/except/finally, with exits ------===//
//
// CPython 3.11's zero-cost exceptions, over symbolic frames. An exception
// raised while an instruction executes is a RaisedException error; the
// dispatch loop calls unwindToHandler, which looks the instruction up in
// the frame's exception table (co_exceptiontable, decoded into
// ExceptionRegions) and, as CPython's exception_unwind does, pops the value
// stack to the row's depth, pushes lasti when the row says so, pushes the
// exception and jumps to the handler. Without a row, the error leaves the
// frame: the caller's CALL returns it and the caller's table is searched
// in turn. The handler's bytecode does the rest with the opcodes below.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/BuiltinContext.h"
#include "frontend/capture/BytecodeMachine.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/embedding/PyStrings.h"

namespace dync::capture {

using bytecode::Instruction;
using python::PyRef;

namespace {

/// The exception instance an exception value holds, or null.
PyObject* exceptionObject(const ValuePtr& value) {
  if (value && value->kind == ValueKind::Object && value->object &&
      PyExceptionInstance_Check(value->object.get()))
    return value->object.get();
  return nullptr;
}

/// The instruction of \p code whose opcode word is at code unit \p lasti.
std::optional<size_t> instructionAtUnit(const bytecode::DecodedCode& code, long lasti) {
  for (size_t i = 0; i < code.instructions.size(); ++i)
    if (static_cast<long>(code.instructions[i].opcodeOffset() / 2) == lasti)
      return i;
  return std::nullopt;
}

} // namespace

llvm::Error BytecodeMachine::unwindToHandler(Frame& f, llvm::Error error) {
  if (!error.isA<RaisedException>())
    return error;
  std::optional<bytecode::ExceptionRegion> handler = findExceptionHandler(*f.decoded, f.pc);
  if (!handler)
    return error;
  if (handler->depth > f.stack.size()) {
    llvm::consumeError(std::move(error));
    return locate(captureError("the exception table asks for a stack of " +
                               llvm::Twine(handler->depth) + " values where the frame holds " +
                               llvm::Twine(f.stack.size())));
  }
  ValuePtr exception;
  llvm::handleAllErrors(std::move(error), [&](std::unique_ptr<RaisedException> raised) {
    exception = raised->exception();
    // A re-raise finds the words and the place of the first raise.
    if (PyObject* object = raised->object())
      raisedOrigins_.try_emplace(
          object, RaisedOrigin{PyRef::borrow(object), raised->uncaughtReason(), raised->stack()});
  });
  f.stack.resize(handler->depth);
  if (handler->pushLasti)
    f.stack.push_back(makeInt(f.instruction().opcodeOffset() / 2));
  f.stack.push_back(std::move(exception));
  f.kwNames = PyRef();
  f.pc = handler->handler;
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::reraise(const ValuePtr& exception) {
  PyObject* object = exceptionObject(exception);
  if (!object)
    return captureError("re-raising a value that is not an exception");
  auto origin = raisedOrigins_.find(object);
  if (origin != raisedOrigins_.end()) {
    auto raised = std::make_unique<RaisedException>(exception, origin->second.reason);
    raised->setStack(origin->second.stack);
    return llvm::Error(std::move(raised));
  }
  std::string message = python::strOf(object);
  return llvm::make_error<RaisedException>(
      exception, "the program raises " +
                     qualifiedTypeName(reinterpret_cast<PyObject*>(Py_TYPE(object))) +
                     (message.empty() ? "" : ": " + message));
}

llvm::Error BytecodeMachine::uncaught(llvm::Error error) {
  raisedOrigins_.clear();
  handledException_ = nullptr;
  if (!error.isA<RaisedException>())
    return error;
  std::unique_ptr<CaptureError> stopped;
  llvm::handleAllErrors(std::move(error), [&](std::unique_ptr<RaisedException> raised) {
    stopped = std::make_unique<CaptureError>(raised->uncaughtReason(), raised->stack());
  });
  return llvm::Error(std::move(stopped));
}

//===----------------------------------------------------------------------===//
// raise
//===----------------------------------------------------------------------===//

llvm::Error BytecodeMachine::op_RAISE_VARARGS(Frame& f, const Instruction& ins) {
  std::vector<ValuePtr> operands = popN(f, ins.arg);
  if (operands.empty()) {
    // A bare `raise` re-raises the exception being handled.
    if (!handledException_ || handledException_->isNone())
      return raiseBuiltin(PyExc_RuntimeError, "No active exception to reraise",
                          "the program raises");
    return reraise(handledException_);
  }
  // `raise Class` raises Class(); an instance is raised as it is.
  auto instantiate = [&](const ValuePtr& value) -> llvm::Expected<ValuePtr> {
    if (value->kind == ValueKind::Object && PyExceptionClass_Check(value->object.get()))
      return context_.call(value, {});
    return value;
  };
  llvm::Expected<ValuePtr> raised = instantiate(operands.front());
  if (!raised)
    return raised.takeError();
  PyObject* object = exceptionObject(*raised);
  if (!object) {
    if ((*raised)->kind == ValueKind::Instance)
      return captureError("raising an object of class '" +
                          qualifiedTypeName((*raised)->object.get()) +
                          "' made while capturing is not supported; raise an exception of a "
                          "class defined outside the captured function");
    return raiseBuiltin(PyExc_TypeError, "exceptions must derive from BaseException",
                        "the program raises");
  }
  // Raising chains the real exception object (its cause and context): a
  // rollback puts its chain back as it was.
  if (recorder_.speculating()) {
    PyRef cause = PyRef::steal(PyException_GetCause(object));
    PyRef context = PyRef::steal(PyException_GetContext(object));
    char suppress = reinterpret_cast<PyBaseExceptionObject*>(object)->suppress_context;
    recorder_.onRollback([raised = PyRef::borrow(object), cause, context, suppress] {
      PyException_SetCause(raised.get(), Py_XNewRef(cause.get()));
      PyException_SetContext(raised.get(), Py_XNewRef(context.get()));
      reinterpret_cast<PyBaseExceptionObject*>(raised.get())->suppress_context = suppress;
    });
  }
  if (operands.size() == 2) {
    // `raise e from cause`: cause is None, an exception class or instance.
    const ValuePtr& causeValue = operands[1];
    PyRef cause;
    if (!causeValue->isNone()) {
      llvm::Expected<ValuePtr> made = instantiate(causeValue);
      if (!made)
        return made.takeError();
      if (!exceptionObject(*made))
        return raiseBuiltin(PyExc_TypeError, "exception causes must derive from BaseException",
                            "the program raises");
      cause = (*made)->object;
    }
    // PyException_SetCause steals its reference; None sets the suppression.
    PyException_SetCause(object, cause ? cause.release() : nullptr);
    reinterpret_cast<PyBaseExceptionObject*>(object)->suppress_context = 1;
  }
  // Raised while another is handled, it is that one's context, as in
  // CPython.
  if (PyObject* handled = exceptionObject(handledException_); handled && handled != object)
    PyException_SetContext(object, PyRef::borrow(handled).release());

  // What capture says when nothing catches it: the class and message.
  std::string what = qualifiedTypeName(reinterpret_cast<PyObject*>(Py_TYPE(object)));
  std::string message = python::strOf(object);
  if (PyErr_GivenExceptionMatches(object, PyExc_AssertionError))
    return llvm::make_error<RaisedException>(*raised, "assertion failed" +
                                                          (message.empty() ? "" : ": " + message));
  return llvm::make_error<RaisedException>(*raised, "the program raises " + what +
                                                        (message.empty() ? "" : ": " + message));
}

//===----------------------------------------------------------------------===//
// Handlers
//===----------------------------------------------------------------------===//

llvm::Error BytecodeMachine::op_PUSH_EXC_INFO(Frame& f, const Instruction&) {
  ValuePtr exception = pop(f);
  f.stack.push_back(handledException_ ? handledException_ : makeNone());
  f.stack.push_back(exception);
  handledException_ = std::move(exception);
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_POP_EXCEPT(Frame& f, const Instruction&) {
  ValuePtr previous = pop(f);
  handledException_ = previous->isNone() ? nullptr : std::move(previous);
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_CHECK_EXC_MATCH(Frame& f, const Instruction&) {
  ValuePtr classes = pop(f);
  PyObject* exception = exceptionObject(f.stack.back());
  if (!exception)
    return captureError("'except' on a value that is not an exception");
  // What `except` names must be exception classes, checked as CPython does
  // before matching.
  llvm::Expected<PyRef> real = context_.toPython(classes);
  if (!real)
    return real.takeError();
  PyObject* types = real->get();
  bool valid = PyExceptionClass_Check(types);
  if (PyTuple_Check(types)) {
    valid = true;
    for (Py_ssize_t i = 0, e = PyTuple_GET_SIZE(types); i < e; ++i)
      valid &= PyExceptionClass_Check(PyTuple_GET_ITEM(types, i)) != 0;
  }
  if (!valid)
    return raiseBuiltin(PyExc_TypeError,
                        "catching classes that do not inherit from BaseException is not allowed",
                        "the program raises");
  f.stack.push_back(makeBool(PyErr_GivenExceptionMatches(exception, types) != 0));
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_RERAISE(Frame& f, const Instruction& ins) {
  if (f.stack.size() < ins.arg + 1u)
    return captureError("RERAISE on a stack of " + llvm::Twine(f.stack.size()) + " values");
  if (ins.arg) {
    // CPython sets the frame's last instruction back to the one that first
    // raised (the offset the handler kept), for the traceback's line; the
    // handler is still looked up from RERAISE itself. The place an error
    // names is the first raise's already (see reraise).
    const ValuePtr& lasti = f.stack[f.stack.size() - 1 - ins.arg];
    if (!lasti->isConstant() || !PyLong_Check(lasti->object.get()) ||
        !instructionAtUnit(*f.decoded, PyLong_AsLong(lasti->object.get())))
      return captureError("RERAISE without the offset of the raising instruction");
  }
  return reraise(pop(f));
}

//===----------------------------------------------------------------------===//
// Leaving a `with` block by an exception
//===----------------------------------------------------------------------===//

bool BytecodeMachine::isGradModeExit(const ValuePtr& exit) const {
  if (!exit || exit->kind != ValueKind::Object || !exit->object)
    return false;
  PyObject* object = exit->object.get();
  return context_.isGradModeManager(object) ||
         (PyMethod_Check(object) && context_.isGradModeManager(PyMethod_GET_SELF(object)));
}

llvm::Error BytecodeMachine::op_WITH_EXCEPT_START(Frame& f, const Instruction&) {
  // The stack is: __exit__, lasti, the exception handled before, the
  // exception; `__exit__(type, value, traceback)` decides whether the block
  // swallows it.
  if (f.stack.size() < 4)
    return captureError("WITH_EXCEPT_START on a stack of " + llvm::Twine(f.stack.size()) +
                        " values");
  ValuePtr exit = f.stack[f.stack.size() - 4];
  ValuePtr exception = f.stack.back();
  PyObject* object = exceptionObject(exception);
  if (!object)
    return captureError("leaving a 'with' block by a value that is not an exception");
  ValuePtr type =
      makeValue(ValueKind::Object, PyRef::borrow(reinterpret_cast<PyObject*>(Py_TYPE(object))));
  PyRef tracebackObject = PyRef::steal(PyException_GetTraceback(object));
  ValuePtr traceback = tracebackObject ? makeValue(ValueKind::Object, tracebackObject) : makeNone();
  if (isGradModeExit(exit)) {
    // A grad-mode manager runs for real (see BEFORE_WITH): it restores the
    // mode and never swallows the exception.
    PyRef result = PyRef::steal(
        PyObject_CallFunctionObjArgs(exit->object.get(), type->object.get(), object,
                                     tracebackObject ? tracebackObject.get() : Py_None, nullptr));
    if (!result)
      return programError("leaving a 'with' block");
    f.stack.push_back(makeConstant(result));
    return llvm::Error::success();
  }
  llvm::Expected<ValuePtr> result = context_.call(exit, {type, exception, traceback});
  if (!result)
    return result.takeError();
  f.stack.push_back(*result);
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// sys.exc_info()
//===----------------------------------------------------------------------===//

namespace {

/// sys.exc_info(): the exception being handled, in this frame or a caller's
/// `except` block, as (type, value, traceback); (None, None, None) outside
/// any. Capture raises exceptions without running frames for real, so the
/// traceback is what the exception object holds (its `__traceback__`).
llvm::Expected<ValuePtr> sysExcInfo(BuiltinContext& interp, const ValuePtr&,
                                    std::vector<ValuePtr>& args, KeywordArgs& kwargs) {
  if (!args.empty() || !kwargs.empty())
    return raiseBuiltin(PyExc_TypeError, "sys.exc_info() takes no arguments");
  const ValuePtr& handled = interp.handledException();
  if (!handled || handled->isNone())
    return makeTuple({makeNone(), makeNone(), makeNone()});
  PyObject* object = exceptionObject(handled);
  if (!object)
    return captureError("sys.exc_info(): the exception being handled is not an exception object");
  llvm::Expected<ValuePtr> traceback = interp.getAttr(handled, "__traceback__");
  if (!traceback)
    return traceback.takeError();
  return makeTuple(
      {makeValue(ValueKind::Object, PyRef::borrow(reinterpret_cast<PyObject*>(Py_TYPE(object)))),
       handled, *traceback});
}

} // namespace

llvm::Error registerExceptionInfoHandlers(BuiltinContext& interp) {
  llvm::Expected<PyRef> excInfo = importObject("sys.exc_info");
  if (!excInfo)
    return excInfo.takeError();
  addBuiltin(interp, excInfo->get(), sysExcInfo);
  return llvm::Error::success();
}

} // namespace dync::capture
