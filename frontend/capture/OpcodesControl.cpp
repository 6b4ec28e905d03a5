//===- OpcodesControl.cpp - Jumps, loops, returns, raises, calls ----------===//
#include "frontend/capture/BytecodeMachine.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/DispatchExclusion.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/capture/ThreadLocks.h"
#include "frontend/embedding/PyStrings.h"

#include <optional>

namespace dync::capture {

namespace {

/// What `with warnings.catch_warnings(...)` gives when entered while
/// capturing, or nullopt when \p cls is another class. The block saves and
/// restores the warnings module's filters, which nothing in the graph reads
/// (graphs do not warn; a warning capture shows is shown, not recorded), so
/// it is entered and left without doing anything: `as w` is a list for
/// record=True (left empty), else None. detectron2's Conv2d wraps a check
/// of empty inputs in one.
llvm::Expected<std::optional<ValuePtr>>
catchWarningsEntered(ObjectSemantics& semantics, const ValuePtr& manager, PyTypeObject* cls) {
  llvm::Expected<python::PyRef> catchWarnings = importObject("warnings.catch_warnings");
  if (!catchWarnings)
    return catchWarnings.takeError();
  if (!PyType_IsSubtype(cls, reinterpret_cast<PyTypeObject*>(catchWarnings->get())))
    return std::nullopt;
  llvm::Expected<ValuePtr> record = semantics.getAttr(manager, "_record");
  if (!record)
    return record.takeError();
  llvm::Expected<bool> recording = semantics.truth(*record);
  if (!recording)
    return recording.takeError();
  return std::optional<ValuePtr>(*recording ? makeList({}) : makeNone());
}

} // namespace

using bytecode::Instruction;
using python::PyRef;

//===----------------------------------------------------------------------===//
// Loops and jumps. Every jump is on a known value: loops unroll, branches
// on tensors stop capture (semantics_.truth() says why), except those whose one side
// only raises, which become run-time checks.
//===----------------------------------------------------------------------===//

llvm::Error BytecodeMachine::op_GET_ITER(Frame& f, const Instruction&) {
  ValuePtr iterable = pop(f);
  llvm::Expected<ValuePtr> iterator = semantics_.iter(iterable);
  if (!iterator)
    return iterator.takeError();
  f.stack.push_back(*iterator);
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_FOR_ITER(Frame& f, const Instruction& ins) {
  llvm::Expected<ValuePtr> item = semantics_.next(f.stack.back());
  if (!item)
    return item.takeError();
  if (!*item) {
    pop(f);
    f.next = ins.jumpTarget;
    return llvm::Error::success();
  }
  f.stack.push_back(*item);
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_JUMP_FORWARD(Frame& f, const Instruction& ins) {
  f.next = ins.jumpTarget;
  return llvm::Error::success();
}
llvm::Error BytecodeMachine::op_JUMP_BACKWARD(Frame& f, const Instruction& ins) {
  f.next = ins.jumpTarget;
  return llvm::Error::success();
}
llvm::Error BytecodeMachine::op_JUMP_BACKWARD_NO_INTERRUPT(Frame& f, const Instruction& ins) {
  f.next = ins.jumpTarget;
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::jumpIf(Frame& f, const Instruction& ins, bool alwaysPop, bool onTrue) {
  ValuePtr condition = f.stack.back();
  if (llvm::Error error = values_.readAllUnread(condition))
    return error;
  // A branch on a tensor whose one side only raises becomes a run-time
  // check (RaiseOnlyBranch.cpp); any other one is reported by semantics_.truth().
  if (alwaysPop && condition->isTensor()) {
    llvm::Expected<bool> checked = raiseOnlyBranch(f, ins, onTrue);
    if (!checked)
      return checked.takeError();
    if (*checked)
      return llvm::Error::success();
  }
  if (alwaysPop && condition->kind == ValueKind::SymNum) {
    llvm::Expected<bool> checked = raiseOnlySymbolicBranch(f, ins, onTrue);
    if (!checked)
      return checked.takeError();
    if (*checked)
      return llvm::Error::success();
  }
  llvm::Expected<bool> value = semantics_.truth(condition);
  if (!value)
    return value.takeError();
  bool jump = *value == onTrue;
  // POP_JUMP_* always pop; JUMP_IF_*_OR_POP keep the value when jumping.
  if (alwaysPop || !jump)
    pop(f);
  if (jump)
    f.next = ins.jumpTarget;
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::jumpIfNone(Frame& f, const Instruction& ins, bool onNone) {
  // Whether it is None reads nothing of a list.
  ValuePtr value = popUnread(f);
  llvm::Expected<bool> none = semantics_.identical(value, makeNone());
  if (!none)
    return none.takeError();
  if (*none == onNone)
    f.next = ins.jumpTarget;
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_POP_JUMP_FORWARD_IF_TRUE(Frame& f, const Instruction& ins) {
  return jumpIf(f, ins, true, true);
}
llvm::Error BytecodeMachine::op_POP_JUMP_FORWARD_IF_FALSE(Frame& f, const Instruction& ins) {
  return jumpIf(f, ins, true, false);
}
llvm::Error BytecodeMachine::op_POP_JUMP_BACKWARD_IF_TRUE(Frame& f, const Instruction& ins) {
  return jumpIf(f, ins, true, true);
}
llvm::Error BytecodeMachine::op_POP_JUMP_BACKWARD_IF_FALSE(Frame& f, const Instruction& ins) {
  return jumpIf(f, ins, true, false);
}
llvm::Error BytecodeMachine::op_POP_JUMP_FORWARD_IF_NONE(Frame& f, const Instruction& ins) {
  return jumpIfNone(f, ins, true);
}
llvm::Error BytecodeMachine::op_POP_JUMP_FORWARD_IF_NOT_NONE(Frame& f, const Instruction& ins) {
  return jumpIfNone(f, ins, false);
}
llvm::Error BytecodeMachine::op_POP_JUMP_BACKWARD_IF_NONE(Frame& f, const Instruction& ins) {
  return jumpIfNone(f, ins, true);
}
llvm::Error BytecodeMachine::op_POP_JUMP_BACKWARD_IF_NOT_NONE(Frame& f, const Instruction& ins) {
  return jumpIfNone(f, ins, false);
}
llvm::Error BytecodeMachine::op_JUMP_IF_TRUE_OR_POP(Frame& f, const Instruction& ins) {
  return jumpIf(f, ins, false, true);
}
llvm::Error BytecodeMachine::op_JUMP_IF_FALSE_OR_POP(Frame& f, const Instruction& ins) {
  return jumpIf(f, ins, false, false);
}

llvm::Error BytecodeMachine::op_RETURN_VALUE(Frame& f, const Instruction&) {
  // What a property getter returns to the attribute read is pushed on
  // the caller's stack, which reads it whole when it is used whole.
  f.returnValue = f.returnsUnread ? popUnread(f) : pop(f);
  f.done = true;
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_LOAD_ASSERTION_ERROR(Frame& f, const Instruction&) {
  f.stack.push_back(makeValue(ValueKind::Object, PyRef::borrow(PyExc_AssertionError)));
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Calls.
//===----------------------------------------------------------------------===//

llvm::Error BytecodeMachine::op_KW_NAMES(Frame& f, const Instruction& ins) {
  f.kwNames = PyRef::borrow(PyTuple_GET_ITEM(f.code->co_consts, ins.arg));
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_PRECALL(Frame&, const Instruction&) {
  // CALL unpacks bound methods itself.
  return llvm::Error::success();
}

/// `hasattr(obj, "name")` of an object of a dict class whose entries are
/// unread (UnreadDicts.cpp): its answer, pushed in place of the call, or
/// false when the call is to run as any other.
static bool hasattrOfUnread(Frame& f, size_t argc, const KeywordArgs& kwargs, ValueBuilder& values,
                            PyObject* builtins) {
  if (argc != 2 || !kwargs.empty() || f.stack.size() < 4)
    return false;
  const ValuePtr& first = f.stack[f.stack.size() - 4];
  const ValuePtr& callee = f.stack[f.stack.size() - 3];
  const ValuePtr& object = f.stack[f.stack.size() - 2];
  const ValuePtr& name = f.stack[f.stack.size() - 1];
  if (first->kind != ValueKind::Null || callee->kind != ValueKind::Builtin ||
      callee->object.get() != PyDict_GetItemString(PyModule_GetDict(builtins), "hasattr") ||
      !object->unreadItems || !name->isConstant() || !PyUnicode_CheckExact(name->object.get()))
    return false;
  std::optional<std::string> text = python::utf8Of(name->object.get());
  std::optional<bool> has = text ? values.hasattrUnread(object, *text) : std::nullopt;
  if (!has)
    return false;
  f.stack.resize(f.stack.size() - 4);
  f.stack.push_back(makeBool(*has));
  return true;
}

/// `d.get(key)` or `d.get(key, default)` of a dict whose entries are
/// unread, by a constant key (UnreadDicts.cpp): its answer, pushed in place
/// of the call, or false when the call is to run as any other (reading the
/// dict whole).
static llvm::Expected<bool> getOfUnread(Frame& f, size_t argc, const KeywordArgs& kwargs,
                                        ValueBuilder& values) {
  if ((argc != 1 && argc != 2) || !kwargs.empty() || f.stack.size() < argc + 2)
    return false;
  const ValuePtr& first = f.stack[f.stack.size() - argc - 2];
  const ValuePtr& method = f.stack[f.stack.size() - argc - 1];
  if (first->kind != ValueKind::Null || method->kind != ValueKind::BoundMethod ||
      method->items.size() != 2 || !method->items[0]->unreadItems ||
      method->items[1]->kind != ValueKind::Builtin)
    return false;
  static PyObject* dictGet = [] {
    PyRef name = PyRef::steal(python::newStr("get"));
    PyObject* found = name ? _PyType_Lookup(&PyDict_Type, name.get()) : nullptr;
    PyErr_Clear();
    return found;
  }();
  if (!dictGet || method->items[1]->object.get() != dictGet)
    return false;
  const ValuePtr& key = f.stack[f.stack.size() - argc];
  ValuePtr fallback = argc == 2 ? f.stack.back() : nullptr;
  llvm::Expected<std::optional<ValuePtr>> entry = values.getUnread(method->items[0], key, fallback);
  if (!entry)
    return entry.takeError();
  if (!*entry)
    return false;
  f.stack.resize(f.stack.size() - argc - 2);
  f.stack.push_back(**entry);
  return true;
}

llvm::Error BytecodeMachine::callWithStack(Frame& f, size_t argc, KeywordArgs kwargs) {
  if (hasattrOfUnread(f, argc, kwargs, values_, types_.builtinsModule.get()))
    return llvm::Error::success();
  llvm::Expected<bool> got = getOfUnread(f, argc, kwargs, values_);
  if (!got)
    return got.takeError();
  if (*got)
    return llvm::Error::success();
  std::vector<ValuePtr> args = popN(f, argc);
  ValuePtr second = popUnread(f);
  ValuePtr first = popUnread(f);
  // [NULL, callable, args...] or [callable, self, args...].
  ValuePtr callee = second;
  if (first->kind != ValueKind::Null) {
    callee = first;
    args.insert(args.begin(), second);
  }
  // Appending to a list leaves its items unread (UnreadLists.cpp); any
  // other call may read what it is given.
  if (!appendsToUnreadList(callee)) {
    readWhole(first);
    readWhole(second);
  }
  if (llvm::Error error = takeReadError())
    return error;
  llvm::Expected<ValuePtr> result = context_.call(callee, std::move(args), std::move(kwargs));
  if (!result)
    return result.takeError();
  f.stack.push_back(*result);
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_CALL(Frame& f, const Instruction& ins) {
  KeywordArgs kwargs;
  size_t argc = ins.arg;
  if (f.kwNames) {
    Py_ssize_t count = PyTuple_GET_SIZE(f.kwNames.get());
    std::vector<ValuePtr> values = popN(f, count);
    for (Py_ssize_t i = 0; i < count; ++i)
      kwargs.emplace_back(python::utf8Of(PyTuple_GET_ITEM(f.kwNames.get(), i)).value_or("?"),
                          values[i]);
    argc -= count;
    f.kwNames = PyRef();
  }
  return callWithStack(f, argc, std::move(kwargs));
}

llvm::Error BytecodeMachine::op_CALL_FUNCTION_EX(Frame& f, const Instruction& ins) {
  KeywordArgs kwargs;
  if (ins.arg & 1) {
    ValuePtr dict = pop(f);
    if (dict->kind != ValueKind::Dict)
      return captureError("** argument is a " + spelling(dict->kind) + ", not a dict");
    for (const auto& [key, value] : dict->entries) {
      if (!key->isConstant() || !PyUnicode_Check(key->object.get()))
        return captureError("keywords must be strings");
      kwargs.emplace_back(python::utf8Of(key->object.get()).value_or("?"), value);
    }
  }
  ValuePtr positional = pop(f);
  llvm::Expected<std::vector<ValuePtr>> args = semantics_.unpack(positional);
  if (!args)
    return args.takeError();
  ValuePtr callee = pop(f);
  pop(f); // the NULL below it
  llvm::Expected<ValuePtr> result = context_.call(callee, std::move(*args), std::move(kwargs));
  if (!result)
    return result.takeError();
  f.stack.push_back(*result);
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_MAKE_FUNCTION(Frame& f, const Instruction& ins) {
  ValuePtr code = pop(f);
  ValuePtr function = makeValue(ValueKind::Function);
  function->code = code->object;
  function->globals = PyRef::borrow(f.globals);
  function->entryGlobals = f.entryGlobals;
  function->qualname =
      python::utf8Of(reinterpret_cast<PyCodeObject*>(code->object.get())->co_qualname)
          .value_or("<function>");
  if (ins.arg & 0x08)
    function->closure = pop(f)->items;
  if (ins.arg & 0x04)
    pop(f); // annotations do not change what the function computes
  if (ins.arg & 0x02)
    function->entries = pop(f)->entries;
  if (ins.arg & 0x01)
    function->items = pop(f)->items;
  f.stack.push_back(function);
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_RETURN_GENERATOR(Frame& f, const Instruction&) {
  if (!f.generator)
    return captureError("RETURN_GENERATOR outside a generator body");
  // The generator body runs at once; it resumes with None sent in.
  f.stack.push_back(makeNone());
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_YIELD_VALUE(Frame& f, const Instruction&) {
  if (!f.generator)
    return captureError("yield outside a generator body");
  f.yielded.push_back(pop(f));
  f.stack.push_back(makeNone());
  f.paused = f.pauseAtYield;
  return llvm::Error::success();
}

// `yield from x`: GET_YIELD_FROM_ITER, then SEND and YIELD_VALUE in a loop
// until SEND finds x exhausted. Generators run to their end when called (see
// inlineFunction), so what x yields is known and what is sent back is
// always None; a sub-generator's return value is not kept, so the
// expression's value is None.
llvm::Error BytecodeMachine::op_GET_YIELD_FROM_ITER(Frame& f, const Instruction&) {
  llvm::Expected<ValuePtr> iterator = semantics_.iter(pop(f));
  if (!iterator)
    return iterator.takeError();
  f.stack.push_back(*iterator);
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_SEND(Frame& f, const Instruction& ins) {
  if (!f.generator)
    return captureError("'await' is not supported");
  ValuePtr sent = pop(f);
  if (!sent->isNone())
    return captureError("sending a value into a generator is not supported");
  llvm::Expected<ValuePtr> item = semantics_.next(f.stack.back());
  if (!item)
    return item.takeError();
  if (!*item) {
    f.stack.back() = makeNone();
    f.next = ins.jumpTarget;
    return llvm::Error::success();
  }
  f.stack.push_back(*item);
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Grad-mode blocks: `with torch.no_grad():` switches torch's grad mode for
// real while the block is interpreted, so fake results have the
// requires_grad the block gives them; __exit__ (called by the bytecode at
// the end of the block) switches it back.
//===----------------------------------------------------------------------===//

llvm::Error BytecodeMachine::op_BEFORE_WITH(Frame& f, const Instruction&) {
  ValuePtr manager = pop(f);
  if (manager->kind == ValueKind::Object && isThreadLock(manager->object.get())) {
    // `with lock:` on a threading.Lock or RLock (ThreadLocks.h): the block
    // runs as if the lock were taken. Eager would wait for a lock another
    // thread holds (or never return, for a Lock this thread holds), so the
    // lock must be free now: it is taken without waiting and given back at
    // once, so that no failed capture leaves it held. The __exit__ the
    // block's end calls does nothing (isThreadLockExit). Nothing of it
    // outlasts the check, so a speculated path may take it too.
    PyObject* lock = manager->object.get();
    PyRef exit = PyRef::steal(PyObject_GetAttrString(lock, "__exit__"));
    if (!exit)
      return pythonError("entering a 'with' block on a lock");
    PyRef acquired = PyRef::steal(PyObject_CallMethod(lock, "acquire", "(O)", Py_False));
    if (!acquired)
      return pythonError("entering a 'with' block on a lock");
    if (!PyObject_IsTrue(acquired.get()))
      return captureError("'with' on " + describeObject(lock) +
                          ": the lock is held while capturing (eager would wait for it, or never "
                          "return if this thread holds it); capture enters a lock block only "
                          "when the lock is free");
    PyRef released = PyRef::steal(PyObject_CallMethod(lock, "release", nullptr));
    if (!released)
      return pythonError("entering a 'with' block on a lock");
    f.stack.push_back(makeValue(ValueKind::Object, exit));
    f.stack.push_back(makeConstant(PyRef::borrow(Py_True)));
    return llvm::Error::success();
  }
  if (manager->kind == ValueKind::Object && isDispatchExclusionStandIn(manager->object.get())) {
    // A block that switches off dispatch modes or functorch, neither of
    // which a served call has on (DispatchExclusion.h): entered and left
    // without doing anything.
    llvm::Expected<PyRef> exit = dispatchExclusionExit();
    if (!exit)
      return exit.takeError();
    f.stack.push_back(makeValue(ValueKind::Object, *exit));
    f.stack.push_back(makeNone());
    return llvm::Error::success();
  }
  bool gradMode =
      manager->kind == ValueKind::Object && context_.isGradModeManager(manager->object.get());
  if (!gradMode)
    if (llvm::Expected<bool> entered = enterPythonContext(f, manager); !entered || *entered)
      return entered ? llvm::Error::success() : entered.takeError();
  if (!gradMode)
    return captureError("'with' on " +
                        (manager->kind == ValueKind::Instance
                             ? "an object of class '" + qualifiedTypeName(manager->object.get()) +
                                   "' made while capturing"
                         : manager->object ? describeObject(manager->object.get())
                                           : "a " + spelling(manager->kind).str()) +
                        " is not supported; only torch.no_grad(), torch.enable_grad(), "
                        "torch.set_grad_enabled() and torch.inference_mode() blocks are, and "
                        "context managers whose __enter__ and __exit__ are written in Python");
  if (llvm::Error refused = recorder_.irreversible("switching torch's grad mode"))
    return refused;
  PyRef exit = PyRef::steal(PyObject_GetAttrString(manager->object.get(), "__exit__"));
  if (!exit)
    return pythonError("entering a 'with' block");
  PyRef entered = PyRef::steal(PyObject_CallMethod(manager->object.get(), "__enter__", nullptr));
  if (!entered)
    return pythonError("entering a 'with' block");
  f.stack.push_back(makeValue(ValueKind::Object, exit));
  llvm::Expected<ValuePtr> value = values_.wrapReal(entered.get(), nullptr);
  if (!value)
    return value.takeError();
  f.stack.push_back(*value);
  return llvm::Error::success();
}

llvm::Expected<bool> BytecodeMachine::enterPythonContext(Frame& f, const ValuePtr& manager) {
  // A context manager whose class writes __enter__ and __exit__ in Python
  // (contextlib.nullcontext, the program's own): both run inlined, __exit__
  // when the block's end calls it with (None, None, None).
  llvm::Expected<PyRef> type = context_.pythonType(manager);
  if (!type) {
    llvm::consumeError(type.takeError());
    return false;
  }
  auto* cls = reinterpret_cast<PyTypeObject*>(type->get());
  llvm::Expected<std::optional<ValuePtr>> warningsBlock =
      catchWarningsEntered(semantics_, manager, cls);
  if (!warningsBlock)
    return warningsBlock.takeError();
  if (*warningsBlock) {
    // The no-op exit of the blocks capture enters without effect.
    llvm::Expected<PyRef> exit = dispatchExclusionExit();
    if (!exit)
      return exit.takeError();
    f.stack.push_back(makeValue(ValueKind::Object, *exit));
    f.stack.push_back(**warningsBlock);
    return true;
  }
  PyRef enterName = PyRef::steal(python::newStr("__enter__"));
  PyRef exitName = PyRef::steal(python::newStr("__exit__"));
  PyObject* enterFunction = _PyType_Lookup(cls, enterName.get());
  PyObject* exitFunction = _PyType_Lookup(cls, exitName.get());
  if (!enterFunction || !exitFunction || !PyFunction_Check(enterFunction) ||
      !PyFunction_Check(exitFunction))
    return false;
  // @contextlib.contextmanager: its generator would have to pause at its
  // yield while the block runs; capture runs generators to their end.
  llvm::Expected<PyRef> generatorBase = importObject("contextlib._GeneratorContextManagerBase");
  if (!generatorBase)
    return generatorBase.takeError();
  if (PyType_IsSubtype(cls, reinterpret_cast<PyTypeObject*>(generatorBase->get())))
    return captureError("'with' on a context manager made by @contextlib.contextmanager is not "
                        "supported: its generator would have to pause at its yield while the "
                        "block runs; write it as a class with __enter__ and __exit__");
  if (manager->kind != ValueKind::Instance && manager->kind != ValueKind::Object)
    return false;
  llvm::Expected<ValuePtr> exit = semantics_.getAttr(manager, "__exit__");
  if (!exit)
    return exit.takeError();
  llvm::Expected<ValuePtr> enter = semantics_.getAttr(manager, "__enter__");
  if (!enter)
    return enter.takeError();
  llvm::Expected<ValuePtr> entered = context_.call(*enter, {});
  if (!entered)
    return entered.takeError();
  f.stack.push_back(*exit);
  f.stack.push_back(*entered);
  return true;
}

//===----------------------------------------------------------------------===//
// Imports: modules are read-only objects like any other.
//===----------------------------------------------------------------------===//

llvm::Error BytecodeMachine::op_IMPORT_NAME(Frame& f, const Instruction& ins) {
  ValuePtr fromList = pop(f);
  ValuePtr level = pop(f);
  PyObject* name = PyTuple_GET_ITEM(f.code->co_names, ins.arg);
  // The from-list is a tuple of names, which capture holds as a tuple value:
  // without it, `from a.b import c` would import `a` and look for `c` there.
  llvm::Expected<PyRef> names = context_.toPython(fromList);
  if (!names)
    return names.takeError();
  PyRef module = PyRef::steal(
      PyImport_ImportModuleLevelObject(name, f.globals, nullptr, names->get(),
                                       static_cast<int>(PyLong_AsLong(level->object.get()))));
  if (!module) {
    // Whether an import fails depends on the files and sys.path of the
    // process that calls, which no guard checks: a handler that catches
    // the failure would compile its fallback in for good. Refused rather
    // than raised into the program.
    std::string reason = llvm::toString(pythonError("importing"));
    return captureError("importing " + python::utf8Of(name).value_or("?") + " failed (" + reason +
                        ") while capturing: whether an import fails is not something a guard "
                        "can check, so an import the program may catch failing is not "
                        "supported; import it at module level instead");
  }
  // The module as the guards find it, sys.modules[name]: what the program
  // reads from it is guarded through that source, as for a module global.
  // An import inside torch's own code (torch.functional importing
  // symbolic_shapes on first use) is torch's implementation, which the
  // torch version guard pins; guarding it through sys.modules would miss
  // every call of a process that has not run that import yet.
  SourcePtr source;
  if (PyModule_Check(module.get()) && !insideTorchPackage(f.globals))
    if (const char* moduleName = PyModule_GetName(module.get()))
      if (PyDict_GetItemString(PyImport_GetModuleDict(), moduleName) == module.get())
        source = Source::module(moduleName);
  PyErr_Clear();
  f.stack.push_back(makeValue(ValueKind::Object, module, source));
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_IMPORT_FROM(Frame& f, const Instruction& ins) {
  std::string name = python::utf8Of(PyTuple_GET_ITEM(f.code->co_names, ins.arg)).value_or("?");
  const ValuePtr& module = f.stack.back();
  llvm::Expected<ValuePtr> value = semantics_.getAttr(module, name);
  if (!value) {
    // As CPython's import_from: a submodule not yet bound as an attribute
    // is found in sys.modules; else `from m import name` raises ImportError,
    // not the AttributeError of the read.
    llvm::Error error = value.takeError();
    PyObject* object = module->kind == ValueKind::Object ? module->object.get() : nullptr;
    if (!object || !PyModule_Check(object) || !catchRaised(error, PyExc_AttributeError))
      return error;
    PyObject* moduleName = PyModule_GetNameObject(object);
    std::string package = moduleName ? python::utf8Of(moduleName).value_or("?") : "?";
    Py_XDECREF(moduleName);
    PyErr_Clear();
    PyObject* submodule =
        PyDict_GetItemString(PyImport_GetModuleDict(), (package + "." + name).c_str());
    if (submodule) {
      f.stack.push_back(makeValue(ValueKind::Object, PyRef::borrow(submodule)));
      return llvm::Error::success();
    }
    return raiseBuiltin(PyExc_ImportError,
                        "cannot import name '" + name + "' from '" + package + "'",
                        "the program raises");
  }
  f.stack.push_back(*value);
  return llvm::Error::success();
}

} // namespace dync::capture
