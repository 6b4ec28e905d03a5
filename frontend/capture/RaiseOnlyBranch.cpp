//===- RaiseOnlyBranch.cpp - Data-dependent branches that only raise ------===//
//
// `if torch.any(var < 0): raise ValueError("...")` branches on a tensor's
// values, which capture does not know. When one side of such a branch does
// nothing but build an exception and raise it, the program's result along
// the other side is the same whatever the values are, except that it raises
// when the condition holds. Capture then continues along the other side and
// records a run-time check: `aten::_assert_async.msg`, which raises when its
// one-element tensor is false, with the exception's type and message as its
// text (`"ValueError: var has negative entry/entries"`). torch.fx and the
// passes treat it as a side effect, so it stays in the graph; codegen turns a
// failure of it into the original exception (docs/capture.md, "Branches that
// only raise").
//
// The raising side is run speculatively over a copy of the value stack by a
// small evaluator that knows only what building an exception needs: loads,
// constructing a builtin exception from constants, f-strings and operators
// on constants. It never calls the oracle, never adds a guard and never
// writes a value capture holds, so giving up leaves capture exactly as it
// was, and the data-dependent-branch error stands.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Interpreter.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/embedding/PyStrings.h"

#include <optional>

namespace dync::capture {

using bytecode::Instruction;
using python::PyRef;

namespace {

/// Building an exception takes a few instructions; a longer side is doing
/// something else.
constexpr size_t MaxSpeculatedInstructions = 64;

/// Whether an exception raised at instruction \p index of \p frame would be
/// caught by a handler of that frame (a `try` or a `with` block).
bool handled(const Frame& frame, size_t index) {
  for (const bytecode::ExceptionRegion& region : frame.decoded->exceptionRegions)
    if (region.start <= index && index < region.end)
      return true;
  return false;
}

/// The Python object of a constant value, or null for any other kind.
PyObject* constantObject(const ValuePtr& value) {
  return value && value->isConstant() ? value->object.get() : nullptr;
}

/// Whether \p object is an exception class written in C: making one of
/// those runs no code of the program's (a class written in Python could
/// have an `__init__` with effects).
bool isBuiltinExceptionClass(PyObject* object) {
  return PyExceptionClass_Check(object) &&
         !(PyType_GetFlags(reinterpret_cast<PyTypeObject*>(object)) & Py_TPFLAGS_HEAPTYPE);
}

/// What the check says when it fails: "Type" or "Type: message", for an
/// exception of a builtin class made from no argument or one str, which
/// the runtime can raise again exactly. None for other exceptions.
std::optional<std::string> checkText(PyObject* exception) {
  PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(exception));
  PyRef module = PyRef::steal(PyObject_GetAttrString(type, "__module__"));
  PyRef args = PyRef::steal(PyObject_GetAttrString(exception, "args"));
  if (!module || !args) {
    PyErr_Clear();
    return std::nullopt;
  }
  std::optional<std::string> moduleName = python::utf8Of(module.get());
  // A builtin class's tp_name is its plain name.
  std::string typeName = reinterpret_cast<PyTypeObject*>(type)->tp_name;
  if (moduleName != "builtins" || !PyTuple_CheckExact(args.get()))
    return std::nullopt;
  Py_ssize_t count = PyTuple_GET_SIZE(args.get());
  if (count == 0)
    return typeName;
  if (count != 1 || !PyUnicode_CheckExact(PyTuple_GET_ITEM(args.get(), 0)))
    return std::nullopt;
  std::optional<std::string> message = python::utf8Of(PyTuple_GET_ITEM(args.get(), 0));
  if (!message)
    return std::nullopt;
  return typeName + ": " + *message;
}

} // namespace

llvm::Expected<PyRef> Interpreter::speculateRaise(const Frame& f, size_t start) {
  const std::vector<Instruction>& instructions = f.decoded->instructions;
  // The condition is popped on both sides of a POP_JUMP.
  std::vector<ValuePtr> stack(f.stack.begin(), f.stack.end() - 1);
  PyRef kwNames;
  auto pop = [&]() -> ValuePtr {
    ValuePtr top = std::move(stack.back());
    stack.pop_back();
    return top;
  };
  auto fail = [] { return PyRef(); };
  size_t pc = start;
  for (size_t step = 0; step < MaxSpeculatedInstructions; ++step) {
    // An exception caught in this frame does not leave it.
    if (pc >= instructions.size() || handled(f, pc))
      return fail();
    const Instruction& ins = instructions[pc++];
    const OpcodeEntry* entry = dispatch_[ins.opcode];
    if (!entry)
      return fail();
    llvm::StringRef name = entry->name;
    if (name == "NOP" || name == "PRECALL")
      continue;
    if (name == "LOAD_CONST") {
      stack.push_back(makeConstant(PyRef::borrow(PyTuple_GET_ITEM(f.code->co_consts, ins.arg))));
    } else if (name == "LOAD_FAST") {
      if (ins.arg >= f.locals.size() || !f.locals[ins.arg])
        return fail();
      stack.push_back(f.locals[ins.arg]);
    } else if (name == "LOAD_DEREF") {
      const ValuePtr& cell = ins.arg < f.locals.size() ? f.locals[ins.arg] : nullptr;
      if (!cell || cell->kind != ValueKind::Cell || !cell->cell)
        return fail();
      stack.push_back(cell->cell);
    } else if (name == "LOAD_GLOBAL") {
      // Only an exception class: read as CPython would, without the guard
      // a global of the entry's module gets, since nothing else of the
      // program depends on it.
      PyObject* global = PyTuple_GET_ITEM(f.code->co_names, ins.arg >> 1);
      PyObject* value = PyDict_GetItemWithError(f.globals, global);
      if (!value && !PyErr_Occurred()) {
        PyObject* builtins = PyDict_GetItemString(f.globals, "__builtins__");
        if (builtins && PyModule_Check(builtins))
          builtins = PyModule_GetDict(builtins);
        if (!builtins || !PyDict_Check(builtins))
          builtins = PyModule_GetDict(types_.builtinsModule.get());
        value = PyDict_GetItemWithError(builtins, global);
      }
      if (!value || !PyExceptionClass_Check(value)) {
        PyErr_Clear();
        return fail();
      }
      if (ins.arg & 1)
        stack.push_back(makeValue(ValueKind::Null));
      stack.push_back(makeValue(ValueKind::Object, PyRef::borrow(value)));
    } else if (name == "LOAD_ASSERTION_ERROR") {
      stack.push_back(makeValue(ValueKind::Object, PyRef::borrow(PyExc_AssertionError)));
    } else if (name == "PUSH_NULL") {
      stack.push_back(makeValue(ValueKind::Null));
    } else if (name == "POP_TOP") {
      if (stack.empty())
        return fail();
      pop();
    } else if (name == "COPY" || name == "SWAP") {
      if (ins.arg == 0 || ins.arg > stack.size())
        return fail();
      if (name == "COPY")
        stack.push_back(stack[stack.size() - ins.arg]);
      else
        std::swap(stack.back(), stack[stack.size() - ins.arg]);
    } else if (name == "FORMAT_VALUE") {
      // Only constants: formatting a symbolic number could decide it.
      bool hasSpec = ins.arg & 0x04;
      if (stack.size() < (hasSpec ? 2u : 1u))
        return fail();
      ValuePtr spec = hasSpec ? pop() : nullptr;
      PyObject* value = constantObject(pop());
      if (!value || (spec && !constantObject(spec)))
        return fail();
      PyRef converted = PyRef::borrow(value);
      switch (ins.arg & 0x03) {
      case 1:
        converted = PyRef::steal(PyObject_Str(value));
        break;
      case 2:
        converted = PyRef::steal(PyObject_Repr(value));
        break;
      case 3:
        converted = PyRef::steal(PyObject_ASCII(value));
        break;
      default:
        break;
      }
      PyRef formatted = converted ? PyRef::steal(PyObject_Format(
                                        converted.get(), spec ? constantObject(spec) : nullptr))
                                  : PyRef();
      if (!formatted) {
        PyErr_Clear();
        return fail();
      }
      stack.push_back(makeConstant(std::move(formatted)));
    } else if (name == "BUILD_STRING") {
      if (ins.arg > stack.size())
        return fail();
      PyRef parts = PyRef::steal(PyList_New(0));
      for (size_t i = stack.size() - ins.arg; i < stack.size(); ++i) {
        PyObject* part = constantObject(stack[i]);
        if (!parts || !part || !PyUnicode_CheckExact(part) || PyList_Append(parts.get(), part) < 0)
          return fail();
      }
      stack.resize(stack.size() - ins.arg);
      PyRef empty = PyRef::steal(PyUnicode_FromString(""));
      PyRef joined = empty ? PyRef::steal(PyUnicode_Join(empty.get(), parts.get())) : PyRef();
      if (!joined) {
        PyErr_Clear();
        return fail();
      }
      stack.push_back(makeConstant(std::move(joined)));
    } else if (name == "BINARY_OP") {
      // `"expected " + kind`: CPython on constants, as capture computes it.
      if (stack.size() < 2 || ins.arg >= opcodes_.binaryOps().size())
        return fail();
      ValuePtr b = pop();
      ValuePtr a = pop();
      if (!constantObject(a) || !constantObject(b))
        return fail();
      llvm::Expected<ValuePtr> value = binary(opcodes_.binaryOps()[ins.arg], a, b);
      if (!value) {
        llvm::consumeError(value.takeError());
        return fail();
      }
      if (!(*value)->isConstant())
        return fail();
      stack.push_back(*value);
    } else if (name == "KW_NAMES") {
      kwNames = PyRef::borrow(PyTuple_GET_ITEM(f.code->co_consts, ins.arg));
    } else if (name == "CALL") {
      // [NULL, callable, args...] or [callable, self, args...], as
      // callWithStack reads them; only an exception class is called.
      size_t argc = ins.arg;
      if (stack.size() < argc + 2)
        return fail();
      std::vector<ValuePtr> args(stack.end() - argc, stack.end());
      stack.resize(stack.size() - argc);
      ValuePtr second = pop();
      ValuePtr first = pop();
      ValuePtr callee = second;
      if (first->kind != ValueKind::Null) {
        callee = first;
        args.insert(args.begin(), second);
      }
      if (callee->kind != ValueKind::Object || !isBuiltinExceptionClass(callee->object.get()))
        return fail();
      Py_ssize_t keywords = kwNames ? PyTuple_GET_SIZE(kwNames.get()) : 0;
      if (static_cast<size_t>(keywords) > args.size())
        return fail();
      PyRef positional = PyRef::steal(PyTuple_New(Py_ssize_t(args.size()) - keywords));
      PyRef named = keywords ? PyRef::steal(PyDict_New()) : PyRef();
      if (!positional || (keywords && !named)) {
        PyErr_Clear();
        return fail();
      }
      for (size_t i = 0; i < args.size(); ++i) {
        PyObject* arg = constantObject(args[i]);
        if (!arg)
          return fail();
        Py_ssize_t index = static_cast<Py_ssize_t>(i);
        Py_ssize_t firstKeyword = Py_ssize_t(args.size()) - keywords;
        if (index < firstKeyword) {
          PyTuple_SET_ITEM(positional.get(), index, Py_NewRef(arg));
        } else if (PyDict_SetItem(named.get(),
                                  PyTuple_GET_ITEM(kwNames.get(), index - firstKeyword), arg) < 0) {
          PyErr_Clear();
          return fail();
        }
      }
      kwNames = PyRef();
      PyRef exception =
          PyRef::steal(PyObject_Call(callee->object.get(), positional.get(), named.get()));
      if (!exception || !PyExceptionInstance_Check(exception.get())) {
        PyErr_Clear();
        return fail();
      }
      stack.push_back(makeValue(ValueKind::Object, std::move(exception)));
    } else if (name == "RAISE_VARARGS") {
      // `raise E`, `raise E(...)`, `raise E(...) from cause`: the cause
      // does not change the exception's type or message.
      if (ins.arg < 1 || ins.arg > 2 || stack.size() < ins.arg)
        return fail();
      if (ins.arg == 2)
        pop();
      ValuePtr raised = pop();
      if (raised->kind != ValueKind::Object)
        return fail();
      PyObject* object = raised->object.get();
      if (PyExceptionInstance_Check(object))
        return PyRef::borrow(object);
      if (!isBuiltinExceptionClass(object))
        return fail();
      PyRef made = PyRef::steal(PyObject_CallNoArgs(object));
      if (!made || !PyExceptionInstance_Check(made.get())) {
        PyErr_Clear();
        return fail();
      }
      return made;
    } else {
      // A store, a call of anything else, a jump, a return: the side does
      // more than raise.
      return fail();
    }
  }
  return fail();
}

llvm::Expected<bool> Interpreter::raiseOnlyBranch(Frame& f, const Instruction& ins, bool onTrue) {
  ValuePtr condition = f.stack.back();
  if (!condition->isTensor() || ins.jumpTarget < 0)
    return false;
  // An exception a caller catches is not the program's result.
  for (const Frame* caller : frames_)
    if (caller != &f && handled(*caller, caller->pc))
      return false;

  size_t fallThrough = f.pc + 1;
  size_t target = static_cast<size_t>(ins.jumpTarget);
  llvm::Expected<PyRef> fallRaises = speculateRaise(f, fallThrough);
  if (!fallRaises)
    return fallRaises.takeError();
  llvm::Expected<PyRef> targetRaises = speculateRaise(f, target);
  if (!targetRaises)
    return targetRaises.takeError();
  // Both sides raising is a program that always raises.
  if (bool(*fallRaises) == bool(*targetRaises))
    return false;
  PyObject* exception = *fallRaises ? fallRaises->get() : targetRaises->get();
  std::optional<std::string> text = checkText(exception);
  if (!text)
    return false;

  // bool() of a tensor is defined for one element only; a check on more
  // would fail where eager fails differently.
  PyRef numel = PyRef::steal(PyObject_CallMethod(condition->object.get(), "numel", nullptr));
  if (!numel || !PyLong_CheckExact(numel.get()) || PyLong_AsLongLong(numel.get()) != 1) {
    PyErr_Clear();
    return false;
  }

  // The jump is taken when bool(condition) == onTrue. The check asserts
  // that the raising side is not taken.
  bool raisesWhenTrue = *fallRaises ? !onTrue : onTrue;
  ValuePtr holds = condition;
  if (raisesWhenTrue) {
    llvm::Expected<PyRef> logicalNot = importObject("torch.logical_not");
    if (!logicalNot)
      return logicalNot.takeError();
    llvm::Expected<ValuePtr> negated = callOracle(logicalNot->get(), {condition}, {});
    if (!negated)
      return negated.takeError();
    holds = *negated;
  }
  llvm::Expected<PyRef> assertOp = importObject("torch.ops.aten._assert_async.msg");
  if (!assertOp)
    return assertOp.takeError();
  ValuePtr message = makeConstantSteal(python::newStr(*text));
  if (!message)
    return pythonError("making a check's message");
  llvm::Expected<ValuePtr> checked = callOracle(assertOp->get(), {holds, message}, {});
  if (!checked)
    return checked.takeError();

  pop(f);
  f.next = *fallRaises ? target : fallThrough;
  return true;
}

} // namespace dync::capture
