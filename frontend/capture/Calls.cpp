//===- Calls.cpp - Calling symbolic values: inlining and the oracle -------===//
//
// User functions, methods, lambdas, closures and nn.Module forwards are
// inlined: their bytecode runs in a frame of its own over the caller's
// symbolic values. Torch's builtins go to the oracle; builtins capture models
// itself go to their handlers; pure functions of constants run in CPython.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/AutogradGrad.h"
#include "frontend/capture/BuiltinMethods.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/CompilerQueries.h"
#include "frontend/capture/ControlFlowOperators.h"
#include "frontend/capture/DispatchExclusion.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/FlexAttention.h"
#include "frontend/capture/FunctionTransforms.h"
#include "frontend/capture/GeneratorState.h"
#include "frontend/capture/GuardedDefaults.h"
#include "frontend/capture/Interpreter.h"
#include "frontend/capture/LibraryPreparation.h"
#include "frontend/capture/ModuleConstructors.h"
#include "frontend/capture/ModuleHooks.h"
#include "frontend/capture/NumpyConstants.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/capture/TensorNumbers.h"
#include "frontend/capture/ThreadLocks.h"
#include "frontend/capture/TorchSize.h"
#include "frontend/capture/TypeAttribute.h"
#include "frontend/embedding/PyStrings.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <functional>
#include <iterator>

namespace dync::capture {

using python::PyRef;

namespace {

/// The message of the TypeError CPython raises binding \p positional
/// arguments and the keywords \p kwargs to \p function, which a program
/// can read (`str(error)`): what a stand-in function raises when called
/// with None for each argument, made from the same code's signature
/// (names, counts, flags), defaults and closure size, with an empty body
/// so that nothing runs were it to bind. Nullopt when it cannot be made or
/// when the arguments bind to it.
std::optional<std::string> cpythonBindingMessage(const Value& function, size_t positional,
                                                 const KeywordArgs& kwargs) {
  PyObject* code = function.code.get();
  PyRef opcodes = PyRef::steal(PyImport_ImportModule("opcode"));
  PyRef opmap = opcodes ? PyRef::steal(PyObject_GetAttrString(opcodes.get(), "opmap")) : PyRef();
  PyRef consts = PyRef::steal(PyObject_GetAttrString(code, "co_consts"));
  if (!opmap || !consts || !PyTuple_Check(consts.get()) || PyTuple_GET_SIZE(consts.get()) > 255) {
    PyErr_Clear();
    return std::nullopt;
  }
  auto op = [&](const char* name) {
    PyObject* number = PyDict_GetItemString(opmap.get(), name);
    return static_cast<char>(number ? PyLong_AsLong(number) : 0);
  };
  // RESUME 0; LOAD_CONST None (appended to the constants); RETURN_VALUE.
  const char body[] = {op("RESUME"),       0,
                       op("LOAD_CONST"),   static_cast<char>(PyTuple_GET_SIZE(consts.get())),
                       op("RETURN_VALUE"), 0};
  PyRef none = PyRef::steal(PyTuple_Pack(1, Py_None));
  PyRef newConsts = PyRef::steal(PySequence_Concat(consts.get(), none.get()));
  PyRef replace = PyRef::steal(PyObject_GetAttrString(code, "replace"));
  PyRef fields = PyRef::steal(PyDict_New());
  PyRef bytes = PyRef::steal(PyBytes_FromStringAndSize(body, sizeof(body)));
  PyRef empty = PyRef::steal(PyBytes_FromStringAndSize("", 0));
  PyRef noArgs = PyRef::steal(PyTuple_New(0));
  if (!newConsts || !replace || !fields || !bytes || !empty || !noArgs ||
      PyDict_SetItemString(fields.get(), "co_code", bytes.get()) ||
      PyDict_SetItemString(fields.get(), "co_consts", newConsts.get()) ||
      PyDict_SetItemString(fields.get(), "co_linetable", empty.get()) ||
      PyDict_SetItemString(fields.get(), "co_exceptiontable", empty.get())) {
    PyErr_Clear();
    return std::nullopt;
  }
  PyRef standIn = PyRef::steal(PyObject_Call(replace.get(), noArgs.get(), fields.get()));
  PyRef globals = PyRef::steal(PyDict_New());
  PyRef callee =
      standIn && globals ? PyRef::steal(PyFunction_New(standIn.get(), globals.get())) : PyRef();
  if (!callee) {
    PyErr_Clear();
    return std::nullopt;
  }
  auto nones = [](size_t n) {
    PyRef tuple = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(n)));
    for (size_t i = 0; tuple && i < n; ++i)
      PyTuple_SET_ITEM(tuple.get(), static_cast<Py_ssize_t>(i), Py_NewRef(Py_None));
    return tuple;
  };
  PyRef defaults = function.items.empty() ? PyRef() : nones(function.items.size());
  PyRef kwDefaults = PyRef::steal(PyDict_New());
  for (const auto& [key, value] : function.entries)
    if (key->isConstant())
      PyDict_SetItem(kwDefaults.get(), key->object.get(), Py_None);
  Py_ssize_t freeCount = PyCode_GetNumFree(reinterpret_cast<PyCodeObject*>(code));
  PyRef closure = PyRef::steal(PyTuple_New(freeCount));
  for (Py_ssize_t i = 0; closure && i < freeCount; ++i)
    PyTuple_SET_ITEM(closure.get(), i, PyCell_New(nullptr));
  PyRef qualname = PyRef::steal(python::newStr(function.qualname));
  PyRef callArgs = nones(positional);
  PyRef callKwargs = PyRef::steal(PyDict_New());
  for (const auto& [name, value] : kwargs) {
    PyRef key = PyRef::steal(python::newStr(name));
    if (key)
      PyDict_SetItem(callKwargs.get(), key.get(), Py_None);
  }
  if ((defaults && PyFunction_SetDefaults(callee.get(), defaults.get())) ||
      PyFunction_SetKwDefaults(callee.get(), kwDefaults.get()) ||
      (freeCount && PyFunction_SetClosure(callee.get(), closure.get())) ||
      PyObject_SetAttrString(callee.get(), "__qualname__", qualname.get()) || !callArgs) {
    PyErr_Clear();
    return std::nullopt;
  }
  PyRef result = PyRef::steal(PyObject_Call(callee.get(), callArgs.get(), callKwargs.get()));
  if (result || !PyErr_ExceptionMatches(PyExc_TypeError)) {
    PyErr_Clear();
    return std::nullopt;
  }
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  PyRef message = value ? PyRef::steal(PyObject_Str(value)) : PyRef();
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(traceback);
  PyErr_Clear();
  return message ? python::utf8Of(message.get()) : std::nullopt;
}

/// Binds call arguments to a code object's parameters as CPython does:
/// positional, then keywords, then defaults; extra ones into *args and
/// **kwargs when the function takes them.
/// \p defaultsRead receives the defaults the binding used: the index into
/// __defaults__ of each positional one, and the name of each keyword-only
/// one, so that what they hold can be guarded.
llvm::Expected<std::vector<ValuePtr>> bindArguments(const Value& function,
                                                    std::vector<ValuePtr> args, KeywordArgs kwargs,
                                                    DefaultsRead& defaultsRead) {
  auto* code = reinterpret_cast<PyCodeObject*>(function.code.get());
  const size_t argCount = code->co_argcount, posOnly = code->co_posonlyargcount,
               kwOnly = code->co_kwonlyargcount;
  const bool varArgs = code->co_flags & CO_VARARGS, varKeywords = code->co_flags & CO_VARKEYWORDS;
  PyObject* names = code->co_localsplusnames;
  auto nameAt = [&](size_t i) { return python::utf8Of(PyTuple_GET_ITEM(names, i)).value_or("?"); };
  const std::string& who = function.qualname;
  // CPython's own words, which the program may read from the exception.
  // Raised only when CPython's own binding fails too: a disagreement (or a
  // stand-in that cannot be made) stays capture's error, which no handler
  // of the program sees.
  auto refuse = [&](const llvm::Twine& message) -> llvm::Error {
    if (std::optional<std::string> cpython = cpythonBindingMessage(function, args.size(), kwargs))
      return raiseBuiltin(PyExc_TypeError, *cpython);
    return captureError(message);
  };

  std::vector<ValuePtr> locals(static_cast<size_t>(code->co_nlocalsplus));
  for (size_t i = 0; i < std::min(args.size(), argCount); ++i)
    locals[i] = args[i];
  size_t next = argCount + kwOnly;
  if (varArgs) {
    std::vector<ValuePtr> rest;
    if (args.size() > argCount)
      rest.assign(args.begin() + static_cast<ptrdiff_t>(argCount), args.end());
    locals[next++] = makeTuple(std::move(rest));
  } else if (args.size() > argCount) {
    return refuse(who + "() takes " + llvm::Twine(argCount) + " positional argument" +
                  (argCount == 1 ? "" : "s") + " but " + llvm::Twine(args.size()) + " were given");
  }
  ValuePtr extraKeywords;
  if (varKeywords) {
    extraKeywords = makeValue(ValueKind::Dict);
    locals[next] = extraKeywords;
  }
  for (auto& [name, value] : kwargs) {
    size_t index = posOnly;
    while (index < argCount + kwOnly && nameAt(index) != name)
      ++index;
    if (index < argCount + kwOnly) {
      if (locals[index])
        return raiseBuiltin(PyExc_TypeError,
                            who + "() got multiple values for argument '" + name + "'");
      locals[index] = value;
      continue;
    }
    if (!extraKeywords)
      return raiseBuiltin(PyExc_TypeError,
                          who + "() got an unexpected keyword argument '" + name + "'");
    extraKeywords->entries.emplace_back(makeConstantSteal(python::newStr(name)), value);
  }
  // Positional defaults fill the last parameters; keyword-only ones by name.
  const std::vector<ValuePtr>& defaults = function.items;
  for (size_t i = 0; i < argCount; ++i) {
    if (locals[i])
      continue;
    size_t firstDefault = argCount - std::min(argCount, defaults.size());
    if (i >= firstDefault) {
      locals[i] = defaults[i - firstDefault];
      defaultsRead.positional.push_back(i - firstDefault);
      continue;
    }
    return refuse(who + "() missing required argument '" + nameAt(i) + "'");
  }
  for (size_t i = argCount; i < argCount + kwOnly; ++i) {
    if (locals[i])
      continue;
    std::string name = nameAt(i);
    for (const auto& [key, value] : function.entries)
      if (key->isConstant() && python::utf8Of(key->object.get()).value_or("") == name)
        locals[i] = value;
    if (locals[i])
      defaultsRead.keywordOnly.push_back(name);
    if (!locals[i])
      return raiseBuiltin(PyExc_TypeError,
                          who + "() missing required keyword-only argument '" + name + "'");
  }
  return locals;
}

/// Whether \p function belongs to a C module all of whose functions are
/// pure functions of their arguments: math, cmath, _operator, and
/// unicodedata (the tables tokenizers read in forward: `normalize("NFKC",
/// text)`, `category(ch)`), whose answers depend only on the Unicode
/// version compiled into CPython, which the artifact's CPython check pins.
bool isPureModule(PyObject* function) {
  PyObject* self = PyCFunction_GET_SELF(function);
  if (!self || !PyModule_Check(self))
    return false;
  const char* name = PyModule_GetName(self);
  if (!name) {
    PyErr_Clear();
    return false;
  }
  llvm::StringRef module(name);
  return module == "math" || module == "cmath" || module == "_operator" || module == "unicodedata";
}

/// Whether every value (deeply) is a number, a symbolic number or another
/// constant: what torch's symbolic-shape functions take.
bool numbersOnly(llvm::ArrayRef<ValuePtr> values) {
  return llvm::all_of(values, [](const ValuePtr& value) {
    if (value->isSequence())
      return numbersOnly(value->items);
    return value->kind == ValueKind::Constant || value->kind == ValueKind::SymNum;
  });
}

/// Whether \p function is `torch.nn.Module.__getattr__` itself, called on
/// a module with a constant name (`self.__getattr__(head)`): its reads of
/// `self.__dict__` and the tables are the attribute read capture models.
bool isModuleGetattrCall(BuiltinContext& interp, const Value& function,
                         const std::vector<ValuePtr>& args, const KeywordArgs& kwargs) {
  if (!function.object || args.size() != 2 || !kwargs.empty() ||
      args[0]->kind != ValueKind::NNModule || !args[1]->isConstant() ||
      !PyUnicode_CheckExact(args[1]->object.get()))
    return false;
  PyRef getattr = PyRef::steal(PyObject_GetAttrString(interp.types().module.get(), "__getattr__"));
  PyErr_Clear();
  return getattr && getattr.get() == function.object.get();
}

/// Whether \p object is one of the profiler's record-function operators
/// (`torch.ops.profiler._record_function_enter_new`, `_record_function_exit`
/// and their overloads), which `torch.autograd.profiler.record_function`
/// calls around a block (nn.DataParallel's forward, library annotations).
/// They only mark a range for a profiler that is running; the values the
/// block computes do not depend on them.
bool isProfilerRecordOp(PyObject* object) {
  if (!object || PyType_Check(object))
    return false;
  llvm::StringRef typeName = Py_TYPE(object)->tp_name;
  if (!typeName.contains("OpOverload"))
    return false;
  PyRef name = PyRef::steal(PyObject_GetAttrString(object, "_qualified_op_name"));
  if (!name) {
    PyErr_Clear();
    PyRef schema = PyRef::steal(PyObject_GetAttrString(object, "_schema"));
    name = schema ? PyRef::steal(PyObject_GetAttrString(schema.get(), "name")) : PyRef();
    PyErr_Clear();
  }
  std::optional<std::string> text = name ? python::utf8Of(name.get()) : std::nullopt;
  return text && (*text == "profiler::_record_function_enter_new" ||
                  *text == "profiler::_record_function_enter" ||
                  *text == "profiler::_record_function_exit");
}

/// Which of `torch.autograd.profiler.record_function`'s `__enter__` (1) and
/// `__exit__` (2) \p function is, else 0. A profiler range computes nothing:
/// its methods only tell a running profiler where the range starts and
/// ends (and cache CUPTI's optional module in globals on first use), so
/// capture enters and leaves the block without running them.
int recordFunctionMethod(const Value& function) {
  static PyObject* methods[2] = {nullptr, nullptr}; // alive as long as torch
  if (!function.object)
    return 0;
  if (!methods[0]) {
    PyObject* profiler =
        PyImport_GetModule(PyRef::steal(python::newStr("torch.autograd.profiler")).get());
    PyRef cls =
        profiler ? PyRef::steal(PyObject_GetAttrString(profiler, "record_function")) : PyRef();
    Py_XDECREF(profiler);
    PyRef enter = cls ? PyRef::steal(PyObject_GetAttrString(cls.get(), "__enter__")) : PyRef();
    PyRef exit = cls ? PyRef::steal(PyObject_GetAttrString(cls.get(), "__exit__")) : PyRef();
    PyErr_Clear();
    if (!enter || !exit)
      return 0;
    methods[0] = enter.release();
    methods[1] = exit.release();
  }
  if (function.object.get() == methods[0])
    return 1;
  return function.object.get() == methods[1] ? 2 : 0;
}

/// What capture says when \p function is one of autograd's entry points
/// that accumulate gradients from inside the captured function
/// (`Tensor.backward`, `torch.autograd.backward`): they write `.grad` of
/// every leaf they reach, which capture does not model yet
/// (`torch.autograd.grad`, which returns the gradients, is captured:
/// AutogradGrad.cpp). Nullopt for any other function.
std::optional<std::string> unsupportedAutogradCall(const Value& function) {
  struct Entry {
    const char* module;
    const char* owner; // nullptr: a module-level function
    const char* name;
    const char* spelling;
  };
  static const Entry entries[] = {
      {"torch.autograd", nullptr, "backward", "torch.autograd.backward"},
      {"torch", "Tensor", "backward", "Tensor.backward"}};
  static PyObject* functions[std::size(entries)] = {}; // alive as long as torch
  if (!function.object)
    return std::nullopt;
  for (size_t i = 0; i < std::size(entries); ++i) {
    if (!functions[i]) {
      PyRef module =
          PyRef::steal(PyImport_GetModule(PyRef::steal(python::newStr(entries[i].module)).get()));
      PyRef owner = module && entries[i].owner
                        ? PyRef::steal(PyObject_GetAttrString(module.get(), entries[i].owner))
                        : module;
      PyRef found =
          owner ? PyRef::steal(PyObject_GetAttrString(owner.get(), entries[i].name)) : PyRef();
      PyErr_Clear();
      functions[i] = found.release();
    }
    if (functions[i] && functions[i] == function.object.get())
      return std::string(entries[i].spelling) +
             " inside the captured function is not supported yet: it accumulates gradients into "
             "the .grad of every leaf it reaches, which a compiled graph does not model; call "
             "it on the function's results outside the function, or take the gradients with "
             "torch.autograd.grad";
  }
  return std::nullopt;
}

/// Whether \p function is torch's symbolic-shape API
/// (`torch.fx.experimental.symbolic_shapes`: expect_true, guard_or_false,
/// statically_known_true, ...) or one of torch's symbolic-number functions
/// (`torch.sym_min`, `sym_max`, `sym_int`, `sym_float`, `sym_not`,
/// `sym_ite`, `sym_sum`, ..., the `sym_` functions of torch/__init__.py,
/// which code written for torch.export calls on sizes). Those functions read
/// and extend the ShapeEnv the oracle owns, through SymNode internals
/// (`__sym_min__`, `node.sym_max`) capture does not model, so they run as
/// they are, the way bool() of a SymBool does.
bool isShapeFunction(const Value& function) {
  if (!function.object || !function.globals)
    return false;
  PyObject* module = PyDict_GetItemString(function.globals.get(), "__name__");
  std::string moduleName =
      module && PyUnicode_Check(module) ? python::utf8Of(module).value_or("") : "";
  if (moduleName == "torch.fx.experimental.symbolic_shapes")
    return true;
  return moduleName == "torch" && llvm::StringRef(function.qualname).starts_with("sym_");
}

/// A lazy module (nn.LazyLinear, ...) infers its parameters' shapes from its
/// first input, in a forward pre-hook that then removes itself. That first
/// call happens here, as it would in eager mode: the hook runs for real on
/// the fake arguments, which have the shapes it reads, and materializes real
/// parameters; the forward is then captured like any other module's.
llvm::Error initializeLazyModule(BuiltinContext& interp, PyObject* module,
                                 const std::vector<ValuePtr>& args, const KeywordArgs& kwargs) {
  llvm::Expected<PyRef> lazy = importObject("torch.nn.modules.lazy.LazyModuleMixin");
  if (!lazy)
    return lazy.takeError();
  if (PyObject_IsInstance(module, lazy->get()) != 1 ||
      !PyObject_HasAttrString(module, "_initialize_hook"))
    return llvm::Error::success();
  llvm::Expected<BuiltinContext::PythonCallArguments> call = interp.toPythonArguments(args, kwargs);
  if (!call)
    return call.takeError();
  PyRef kwargsDict = call->kwargs ? call->kwargs : PyRef::steal(PyDict_New());
  PyRef result = PyRef::steal(PyObject_CallMethod(module, "_infer_parameters", "OOO", module,
                                                  call->args.get(), kwargsDict.get()));
  if (!result)
    return pythonError("initializing lazy module " + describeObject(module));
  return llvm::Error::success();
}

/// staticmethod, classmethod and property, and a property's setter, getter
/// and deleter: what decorates methods in a class body.
bool isDescriptorFactory(PyObject* object) {
  if (object == reinterpret_cast<PyObject*>(&PyStaticMethod_Type) ||
      object == reinterpret_cast<PyObject*>(&PyClassMethod_Type) ||
      object == reinterpret_cast<PyObject*>(&PyProperty_Type))
    return true;
  PyObject* self = PyCFunction_Check(object) ? PyCFunction_GET_SELF(object) : nullptr;
  return self && PyObject_TypeCheck(self, &PyProperty_Type);
}

bool isImmutableBuiltinType(PyTypeObject* type) {
  return type == &PyUnicode_Type || type == &PyLong_Type || type == &PyFloat_Type ||
         type == &PyBool_Type || type == &PyTuple_Type || type == &PyBytes_Type ||
         type == &PyComplex_Type || type == &PyFrozenSet_Type;
}

/// The function a functools.lru_cache wrapper \p object caches, to inline
/// in its place; nullopt when \p object is not such a wrapper.
llvm::Expected<std::optional<ValuePtr>> cachedFunction(BuiltinContext& interp, PyObject* object) {
  static PyObject* cacheWrapperType = nullptr; // functools' C type, alive as long as Python
  if (!cacheWrapperType) {
    llvm::Expected<PyRef> type = importObject("functools._lru_cache_wrapper");
    if (!type)
      return type.takeError();
    cacheWrapperType = type->get();
  }
  if (reinterpret_cast<PyObject*>(Py_TYPE(object)) != cacheWrapperType)
    return std::nullopt;
  PyRef function = PyRef::steal(PyObject_GetAttrString(object, "__wrapped__"));
  if (!function)
    return pythonError("reading the function " + describeObject(object) + " caches");
  llvm::Expected<ValuePtr> wrapped = interp.values().wrapReal(function.get(), nullptr);
  if (!wrapped)
    return wrapped.takeError();
  return std::optional<ValuePtr>(*wrapped);
}

/// Whether \p function is the `dispatch` closure of a functools.singledispatch
/// function (singledispatchmethod calls it too): it memoizes its choice per
/// class in a WeakKeyDictionary, a cache capture cannot fill.
bool isSingleDispatchDispatch(const Value& function) {
  static PyObject* dispatchCode = nullptr; // functools' code object, alive as long as Python
  if (!dispatchCode) {
    llvm::Expected<PyRef> singledispatch = importObject("functools.singledispatch");
    if (!singledispatch) {
      llvm::consumeError(singledispatch.takeError());
      return false;
    }
    PyRef probe = PyRef::steal(PyObject_CallOneArg(singledispatch->get(), Py_None));
    PyRef dispatch =
        probe ? PyRef::steal(PyObject_GetAttrString(probe.get(), "dispatch")) : PyRef();
    PyRef code =
        dispatch ? PyRef::steal(PyObject_GetAttrString(dispatch.get(), "__code__")) : PyRef();
    if (!code) {
      PyErr_Clear();
      return false;
    }
    dispatchCode = code.release();
  }
  return function.code.get() == dispatchCode;
}

/// The Python function a TorchScript function was compiled from
/// (`@torch.jit.script def f(...)`, WaveGlow's fused gated activation), or
/// nullopt for any other object. torch.jit.script keeps it on the
/// ScriptFunction as `_torchdynamo_inline` for tracers to inline; eager runs
/// the compiled form, which computes the same values.
llvm::Expected<std::optional<ValuePtr>> scriptedFunction(BuiltinContext& interp, PyObject* object) {
  static PyObject* scriptFunctionType = nullptr; // torch._C's type, alive as long as Python
  if (!scriptFunctionType) {
    llvm::Expected<PyRef> type = importObject("torch.jit.ScriptFunction");
    if (!type)
      return type.takeError();
    scriptFunctionType = type->get();
  }
  if (!PyObject_TypeCheck(object, reinterpret_cast<PyTypeObject*>(scriptFunctionType)))
    return std::nullopt;
  PyRef function = PyRef::steal(PyObject_GetAttrString(object, "_torchdynamo_inline"));
  if (!function || !PyFunction_Check(function.get())) {
    PyErr_Clear();
    return std::nullopt;
  }
  llvm::Expected<ValuePtr> original = interp.values().wrapReal(function.get(), nullptr);
  if (!original)
    return original.takeError();
  return std::optional<ValuePtr>(*original);
}

/// The message for a call into TorchScript: a module made by
/// torch.jit.trace or torch.jit.script (called, or its forward, a
/// ScriptMethod), or a scripted function that kept no Python original. Their
/// code is TorchScript's graph, with the weights a frozen module folded into
/// it, not Python bytecode capture could read.
std::optional<std::string> torchScriptCallable(PyObject* object) {
  static PyObject* types[3] = {nullptr, nullptr, nullptr}; // torch's, alive as long as Python
  static const char* names[3] = {"torch.jit.ScriptModule", "torch._C.ScriptMethod",
                                 "torch.jit.ScriptFunction"};
  for (int i = 0; i < 3; ++i) {
    if (!types[i]) {
      llvm::Expected<PyRef> type = importObject(names[i]);
      if (!type) {
        llvm::consumeError(type.takeError());
        continue;
      }
      types[i] = type->release();
    }
    if (PyObject_TypeCheck(object, reinterpret_cast<PyTypeObject*>(types[i])))
      return std::string("calling ") +
             (i < 2 ? "a TorchScript module (one torch.jit.trace or torch.jit.script made)"
                    : "a TorchScript function that keeps no Python source") +
             " cannot be captured: its code is TorchScript, not Python, and a frozen module's "
             "weights are folded into it; call the nn.Module (or the Python function) it was "
             "made from instead, and let dync compile that";
  }
  return std::nullopt;
}

/// Whether \p object is the module torch.compile(module) returns: an
/// OptimizedModule, whose forward runs the code dynamo compiled from its
/// `_orig_mod`'s call. Such a module exists only once torch._dynamo is
/// imported, so it is looked up there and never imported here.
bool isCompiledModuleWrapper(PyObject* object) {
  PyObject* evalFrame = PyDict_GetItemString(PyImport_GetModuleDict(), "torch._dynamo.eval_frame");
  if (!evalFrame)
    return false;
  PyRef type = PyRef::steal(PyObject_GetAttrString(evalFrame, "OptimizedModule"));
  if (!type) {
    PyErr_Clear();
    return false;
  }
  return reinterpret_cast<PyObject*>(Py_TYPE(object)) == type.get();
}

} // namespace

llvm::Expected<ValuePtr> Interpreter::call(const ValuePtr& callee, std::vector<ValuePtr> args,
                                           KeywordArgs kwargs) {
  // print, warnings.warn and logging: made after the graph (WorldCalls.cpp).
  if (llvm::Expected<std::optional<ValuePtr>> world = callWorld(callee, args, kwargs); !world)
    return world.takeError();
  else if (*world)
    return std::move(**world);
  // torch's functions on the default generator's state, whatever kind of
  // value capture gives them (GeneratorState.h).
  if (std::optional<GeneratorStateFunction> generatorCall =
          generatorStateFunction(callee->object.get()))
    return callGeneratorStateFunction(*this, *generatorCall, args, kwargs);
  // Tensor hooks: capture's table, registered on the real tensor after the
  // graph (TensorHooks.cpp).
  if ((callee->kind == ValueKind::Function || callee->kind == ValueKind::TorchCallable) &&
      isTensorHookMethod(*callee))
    return callTensorHookMethod(*this, *callee, std::move(args), std::move(kwargs));
  if (callee->kind == ValueKind::Function || callee->kind == ValueKind::TorchCallable) {
    if (isAutogradGrad(*callee))
      return callAutogradGrad(std::move(args), std::move(kwargs));
    if (std::optional<std::string> refused = unsupportedAutogradCall(*callee))
      return captureError(*refused);
  }
  // Registering and removing module hooks: capture's own table
  // (ModuleHooks.cpp). A bound method reaches here as its function.
  if (callee->kind == ValueKind::Function && isHookFunction(*callee))
    return callHookFunction(*this, *callee, std::move(args), std::move(kwargs));
  // A profiler range (record_function) marks nothing in a graph: entering
  // gives a stand-in handle for the matching exit, which does nothing.
  if (isProfilerRecordOp(callee->object.get())) {
    PyRef handle =
        PyRef::steal(PyObject_CallNoArgs(reinterpret_cast<PyObject*>(&PyBaseObject_Type)));
    if (!handle)
      return pythonError("making a profiler range's stand-in");
    return makeValue(ValueKind::Object, handle);
  }
  // @contextlib.contextmanager factories and the contexts they make
  // (GeneratorContexts.cpp).
  if (callee->kind == ValueKind::Function || callee->kind == ValueKind::Object) {
    llvm::Expected<std::optional<ValuePtr>> context = callGeneratorContext(callee, args, kwargs);
    if (!context)
      return context.takeError();
    if (*context)
      return std::move(**context);
  }
  switch (callee->kind) {
  case ValueKind::Function:
    if (isCompilerQuery(callee->object.get()))
      return makeConstant(PyRef::borrow(answerCompilerQuery() ? Py_True : Py_False));
    if (isExportQuery(callee->object.get()))
      return makeConstant(PyRef::borrow(exportingAnswer_ ? Py_True : Py_False));
    if (std::optional<std::string> transform = functionTransformName(callee->object.get()))
      return captureError(*transform +
                          " is not supported yet: its function runs under functorch's "
                          "interpreters (batched or differentiated tensors), which capture "
                          "does not model");
    if (std::optional<std::string> flex = flexAttentionFunctionName(callee->object.get()))
      return captureError(
          *flex +
          " is not supported yet: it runs the score_mod and mask_mod under a torch function "
          "mode and the attention through torch.compile, which capture does not model; build "
          "the mask as a bool tensor from index tensors (torch.arange(Q_LEN)[:, None] against "
          "torch.arange(KV_LEN)[None, :]) and pass it to "
          "F.scaled_dot_product_attention(q, k, v, attn_mask=mask), a score_mod's bias as a "
          "float attn_mask");
    if (std::optional<VmapFunction> vmap = vmapFunction(callee->object.get()))
      return callVmapFunction(*vmap, callee, std::move(args), std::move(kwargs));
    if (std::optional<ControlFlowOperator> op = controlFlowOperator(callee->object.get())) {
      llvm::Expected<ValuePtr> result = callControlFlowOperator(*this, *op, args, kwargs);
      if (!result || *result)
        return result;
    }
    if (isShapeFunction(*callee) && numbersOnly(args) &&
        llvm::all_of(kwargs, [](const auto& kw) { return numbersOnly({kw.second}); }))
      return callShapeFunction(callee, args, kwargs);
    if (isAutogradApply(*callee))
      return applyAutogradFunction(std::move(args), std::move(kwargs));
    if (int method = recordFunctionMethod(*callee); method && !args.empty())
      return method == 1 ? args[0] : makeNone();
    if (llvm::Expected<std::optional<ValuePtr>> setup = callFreshModuleSetup(callee, args, kwargs);
        !setup)
      return setup.takeError();
    else if (*setup)
      return std::move(**setup);
    if (llvm::Expected<std::optional<ValuePtr>> set = callRealModuleSetattr(callee, args, kwargs);
        !set)
      return set.takeError();
    else if (*set)
      return std::move(**set);
    if (isModuleGetattrCall(*this, *callee, args, kwargs))
      return semantics_.moduleTableAttr(args[0],
                                        python::utf8Of(args[1]->object.get()).value_or(""));
    if (llvm::Expected<std::optional<ValuePtr>> checkpointed =
            callActivationCheckpoint(callee, args, kwargs);
        !checkpointed)
      return checkpointed.takeError();
    else if (*checkpointed)
      return std::move(**checkpointed);
    if (isSingleDispatchDispatch(*callee))
      return captureError(
          "dispatching by functools.singledispatch or singledispatchmethod is not supported "
          "yet: the dispatcher keeps its choice per class in a cache of its own, which a graph "
          "cannot fill; choose the implementation with isinstance() checks, or call it directly");
    if (llvm::Expected<std::optional<ValuePtr>> constant = callMarkedConstant(callee, args, kwargs);
        !constant)
      return constant.takeError();
    else if (*constant)
      return std::move(**constant);
    if (decoratesLocalClass(*callee, args)) {
      llvm::Expected<PyRef> decorator = materialize(callee);
      if (!decorator)
        return decorator.takeError();
      return callForReal(decorator->get(), args, kwargs);
    }
    return inlineFunction(callee, std::move(args), std::move(kwargs));
  case ValueKind::BoundMethod: {
    args.insert(args.begin(), callee->items[0]);
    return call(callee->items[1], std::move(args), std::move(kwargs));
  }
  case ValueKind::NNModule:
    if (std::optional<std::string> script = torchScriptCallable(callee->object.get()))
      return captureError(*script);
    return callModule(callee, std::move(args), std::move(kwargs));
  case ValueKind::Builtin: {
    BuiltinHandler handler = builtins_.find(callee->object.get());
    return handler(*this, callee, args, kwargs);
  }
  case ValueKind::TorchCallable:
    return callOracle(callee->object.get(), args, kwargs);
  case ValueKind::Object:
  case ValueKind::Constant:
    return callObject(callee, std::move(args), std::move(kwargs));
  case ValueKind::Instance: {
    if (isPartial(callee))
      return callPartial(callee, std::move(args), std::move(kwargs));
    llvm::Expected<ValuePtr> method = instanceAttr(callee, "__call__");
    if (!method)
      return method.takeError();
    return call(*method, std::move(args), std::move(kwargs));
  }
  case ValueKind::List:
    // An object of a list subclass defining __call__ (ListInstances.cpp):
    // its class's method, bound to the list.
    if (callee->object && PyType_Check(callee->object.get()) &&
        typeAttribute(reinterpret_cast<PyTypeObject*>(callee->object.get()), "__call__")) {
      llvm::Expected<ValuePtr> method = getAttr(callee, "__call__");
      if (!method)
        return method.takeError();
      return call(*method, std::move(args), std::move(kwargs));
    }
    return captureError("calling a " + spelling(callee->kind) + " value");
  default:
    return captureError("calling a " + spelling(callee->kind) + " value");
  }
}

llvm::Expected<ValuePtr> Interpreter::callShapeFunction(const ValuePtr& function,
                                                        const std::vector<ValuePtr>& args,
                                                        const KeywordArgs& kwargs) {
  llvm::Expected<PythonCallArguments> arguments = toPythonArguments(args, kwargs);
  if (!arguments)
    return arguments.takeError();
  // A decision on a SymBool becomes a guard of the ShapeEnv, placed at the
  // program's line; it may pin a dimension the user declared dynamic.
  reportLocation();
  PyRef result = PyRef::steal(
      PyObject_Call(function->object.get(), arguments->args.get(), arguments->kwargs.get()));
  if (!result)
    return programError("calling " + function->qualname);
  if (llvm::Error error = checkDynamic())
    return error;
  return wrapFake(result.get());
}

llvm::Expected<ValuePtr> Interpreter::inlineFunction(const ValuePtr& function,
                                                     std::vector<ValuePtr> args,
                                                     KeywordArgs kwargs) {
  auto* code = reinterpret_cast<PyCodeObject*>(function->code.get());
  if (code->co_flags & (CO_COROUTINE | CO_ITERABLE_COROUTINE | CO_ASYNC_GENERATOR))
    return captureError("calling coroutine or async generator " + function->qualname +
                        "() is not supported");
  llvm::Expected<std::vector<ValuePtr>> locals =
      bindCall(function, std::move(args), std::move(kwargs));
  if (!locals)
    return locals.takeError();
  return runFunction(function, std::move(*locals), nullptr);
}

llvm::Expected<std::vector<ValuePtr>>
Interpreter::bindCall(const ValuePtr& function, std::vector<ValuePtr> args, KeywordArgs kwargs) {
  DefaultsRead defaultsRead;
  llvm::Expected<std::vector<ValuePtr>> locals =
      bindArguments(*function, std::move(args), std::move(kwargs), defaultsRead);
  if (!locals)
    return locals.takeError();
  values_.guardDefaultsRead(*function, defaultsRead);
  // A library torch prepares before tracing it is prepared before its
  // first function runs (LibraryPreparation.h).
  if (!function->entryGlobals)
    if (llvm::Error error = prepareLibraryForTracing(function->globals.get()))
      return error;
  return locals;
}

llvm::Error Interpreter::setUpFrame(Frame& frame, const ValuePtr& function,
                                    std::vector<ValuePtr> locals, ValuePtr names) {
  auto* code = reinterpret_cast<PyCodeObject*>(function->code.get());
  llvm::Expected<const bytecode::DecodedCode*> body = machine_.decoded(code);
  if (!body)
    return body.takeError();

  // A class body's code is a constant of the function that runs the class
  // statement, so that function's fingerprint covers it.
  if (!names)
    functionsRun_.push_back({function->code, function->globals, function->qualname});

  frame.code = code;
  frame.decoded = *body;
  frame.locals = std::move(locals);
  frame.names = std::move(names);
  frame.globals = function->globals.get();
  frame.entryGlobals = function->entryGlobals;
  frame.qualname = function->qualname;
  frame.filename = python::utf8Of(code->co_filename).value_or("<unknown>");
  frame.generator = code->co_flags & CO_GENERATOR;
  // Free variables are the last slots of the fast locals; the closure's
  // cells go there, as COPY_FREE_VARS would put them.
  size_t freeCount = static_cast<size_t>(code->co_nfreevars);
  if (function->closure.size() != freeCount)
    return captureError(function->qualname + "() expects " + llvm::Twine(freeCount) +
                        " closure cells, got " + llvm::Twine(function->closure.size()));
  size_t offset = frame.locals.size() - freeCount;
  for (size_t i = 0; i < freeCount; ++i)
    frame.locals[offset + i] = function->closure[i];
  return llvm::Error::success();
}

llvm::Expected<ValuePtr> Interpreter::runFunction(const ValuePtr& function,
                                                  std::vector<ValuePtr> locals, ValuePtr names) {
  Frame frame;
  if (llvm::Error error = setUpFrame(frame, function, std::move(locals), std::move(names)))
    return error;
  llvm::Expected<ValuePtr> result = machine_.run(frame);
  if (!result)
    return result.takeError();
  // A generator ran to its end when called; what it yielded is what
  // iterating it gives. That is exact for generators whose consumer does not
  // affect them (generator expressions), which is what models use.
  if (frame.generator)
    return makeEagerIterator(std::move(frame.yielded));
  return *result;
}

llvm::Expected<std::unique_ptr<Frame>>
Interpreter::pausedFrame(const ValuePtr& function, std::vector<ValuePtr> args, KeywordArgs kwargs) {
  llvm::Expected<std::vector<ValuePtr>> locals =
      bindCall(function, std::move(args), std::move(kwargs));
  if (!locals)
    return locals.takeError();
  auto frame = std::make_unique<Frame>();
  if (llvm::Error error = setUpFrame(*frame, function, std::move(*locals), nullptr))
    return error;
  frame->pauseAtYield = true;
  return frame;
}

llvm::Expected<ValuePtr> Interpreter::callModule(const ValuePtr& module, std::vector<ValuePtr> args,
                                                 KeywordArgs kwargs) {
  PyObject* object = module->object.get();
  std::string name = module->source ? module->source->str() : describeObject(object);
  if (llvm::Error error = initializeLazyModule(*this, object, args, kwargs))
    return error;
  if (module->source)
    guards_.add(typeGuard(module->source, reinterpret_cast<PyObject*>(Py_TYPE(object))));
  // The training flag changes what many modules compute: guard it.
  llvm::Expected<ValuePtr> training = moduleAttr(module, "training");
  if (!training)
    return training.takeError();
  values_.guardNoModuleHooks(module);

  PyRef callName = PyRef::steal(python::newStr("__call__"));
  PyObject* ownCall = _PyType_Lookup(Py_TYPE(object), callName.get());
  PyObject* baseCall =
      _PyType_Lookup(reinterpret_cast<PyTypeObject*>(types_.module.get()), callName.get());
  // torch.compile(module) returns an OptimizedModule whose forward runs the
  // code dynamo compiled from its `_orig_mod`'s call, which computes what
  // that call computes: the wrapped module is called in its place (its own
  // hooks and forward followed as any module's), as torch.export inlines
  // it, with the wrapper's hooks around it as nn.Module's call runs them.
  bool compiledWrapper = isCompiledModuleWrapper(object);
  bool overridesCall = !compiledWrapper && ownCall && ownCall != baseCall;
  // Forward hooks and pre-hooks run around forward, inlined, with their
  // tables guarded (ModuleHooks.cpp); backward hooks stop capture.
  llvm::Expected<ModuleHooks> hooks = readModuleHooks(*this, module, overridesCall);
  if (!hooks)
    return hooks.takeError();
  llvm::Expected<ValuePtr> target = moduleAttr(module, compiledWrapper ? "_orig_mod"
                                                       : overridesCall ? "__call__"
                                                                       : "forward");
  if (!target)
    return target.takeError();
  if (!hooks->empty())
    return callWithModuleHooks(*this, *hooks, module, *target, std::move(args), std::move(kwargs));
  return call(*target, std::move(args), std::move(kwargs));
}

namespace {

/// The parameters and buffers of the modules among \p values (through
/// tuples and lists), added to \p out.
llvm::Error collectModuleTensors(llvm::ArrayRef<ValuePtr> values,
                                 llvm::SmallPtrSetImpl<PyObject*>& out) {
  for (const ValuePtr& value : values) {
    if (value->kind == ValueKind::Tuple || value->kind == ValueKind::List) {
      if (llvm::Error error = collectModuleTensors(value->items, out))
        return error;
      continue;
    }
    if (value->kind != ValueKind::NNModule)
      continue;
    for (const char* tensors : {"parameters", "buffers"}) {
      PyRef iterator = PyRef::steal(PyObject_CallMethod(value->object.get(), tensors, nullptr));
      if (!iterator)
        return pythonError("reading the " + llvm::Twine(tensors) + " of a module");
      // The module keeps its tensors alive while capture holds it.
      while (PyRef tensor = PyRef::steal(PyIter_Next(iterator.get())))
        out.insert(tensor.get());
      if (PyErr_Occurred())
        return pythonError("reading the " + llvm::Twine(tensors) + " of a module");
    }
  }
  return llvm::Error::success();
}

} // namespace

llvm::Expected<ValuePtr> Interpreter::constructModule(const ValuePtr& cls,
                                                      const std::vector<ValuePtr>& args,
                                                      const KeywordArgs& kwargs) {
  PyObject* type = cls->object.get();
  std::string name = "module " + describeObject(type);
  // `nn.Softmax(dim=-1)(x)`: a module of constants without state is made for
  // real, as eager makes it on every call; its forward is then inlined like
  // any module's. A fresh module is in training mode, as in eager. So is a
  // container of modules the program read (gMLP's `nn.Sequential(*layers)`):
  // its children are those modules, read again through their sources
  // (ValueBuilder::wrapReal).
  // A class with an __init__ of its own: followed, not run
  // (FreshModules.cpp).
  if (hasProgramInit(reinterpret_cast<PyTypeObject*>(type)))
    return constructModuleFollowingInit(cls, args, kwargs);
  auto all = [&](bool (*test)(llvm::ArrayRef<ValuePtr>)) {
    return test(args) && llvm::all_of(kwargs, [&](const auto& kw) { return test({kw.second}); });
  };
  if (!all(allConstant) && !all(allConstantOrModules))
    return captureError("constructing " + name +
                        " while capturing from values that are not constants is not "
                        "supported; " +
                        buildOnce("build it in __init__"));
  // Made for real, only torch's code may run (ModuleConstructors.h).
  if (std::optional<std::string> why =
          programCodeInConstructor(reinterpret_cast<PyTypeObject*>(type)))
    return captureError("constructing " + name + " while capturing is not supported: " + *why +
                        ", and capture would run that code for real rather than follow it; "
                        "build the module in __init__");
  llvm::Expected<PythonCallArguments> call = toPythonArguments(args, kwargs);
  if (!call)
    return call.takeError();
  PyRef module = PyRef::steal(PyObject_Call(type, call->args.get(), call->kwargs.get()));
  if (!module)
    return pythonError("constructing " + name);
  freshModules_.push_back(module);
  if (llvm::Error error = refuseTensorsMadeAnew(module.get(), name, args, kwargs))
    return error;
  return makeValue(ValueKind::NNModule, module);
}

llvm::Error Interpreter::refuseTensorsMadeAnew(PyObject* module, const std::string& name,
                                               const std::vector<ValuePtr>& args,
                                               const KeywordArgs& kwargs) {
  // Parameters and buffers made on every call (randomly initialized ones
  // among them) are tensors no graph input names; those of the modules
  // passed in are theirs.
  llvm::SmallPtrSet<PyObject*, 16> passedIn;
  std::vector<ValuePtr> given(args);
  for (const auto& kw : kwargs)
    given.push_back(kw.second);
  if (llvm::Error error = collectModuleTensors(given, passedIn))
    return error;
  for (const char* tensors : {"parameters", "buffers"}) {
    PyRef iterator = PyRef::steal(PyObject_CallMethod(module, tensors, nullptr));
    if (!iterator)
      return pythonError("reading the " + llvm::Twine(tensors) + " of " + name);
    while (PyRef tensor = PyRef::steal(PyIter_Next(iterator.get())))
      if (!passedIn.contains(tensor.get()))
        return captureError("constructing " + name + " while capturing is not supported: it has " +
                            tensors + ", made anew on every call; " +
                            buildOnce("build it in __init__"));
    if (PyErr_Occurred())
      return pythonError("reading the " + llvm::Twine(tensors) + " of " + name);
  }
  return llvm::Error::success();
}

llvm::Expected<ValuePtr> Interpreter::callNumpyOnConstants(const ValuePtr& callee,
                                                           const std::vector<ValuePtr>& args,
                                                           const KeywordArgs& kwargs) {
  PyObject* object = callee->object.get();
  PyRef module = PyRef::steal(PyObject_GetAttrString(object, "__module__"));
  if (!module)
    PyErr_Clear();
  std::string name = module && PyUnicode_Check(module.get())
                         ? python::utf8Of(module.get()).value_or("")
                         : std::string();
  // NumPy's functions, and the methods of its scalars (`s.astype("int")`,
  // whose __module__ is None).
  bool scalarMethod = isPureNumpyScalarMethod(object);
  if (name != "numpy" && !llvm::StringRef(name).starts_with("numpy.") && !scalarMethod)
    return nullptr;
  // Read from the type (`np.generic.astype(s, t)`), it takes the scalar first.
  if (scalarMethod && Py_IS_TYPE(object, &PyMethodDescr_Type) &&
      (args.empty() || !args[0]->object || !isNumpyScalar(args[0]->object.get())))
    return nullptr;
  // NumPy's functions of constants (`np.sqrt(d)`, `np.zeros(n)`) are pure;
  // its random numbers are not.
  if (llvm::StringRef(name).starts_with("numpy.random"))
    return captureError("NumPy's random numbers (" + describeObject(object) +
                        ") differ from call to call; use torch's random functions");
  // Constants, and read-only objects such as NumPy's dtypes.
  // Lists and tuples of them too (`np.stack(arrays)`).
  std::function<bool(const ValuePtr&)> known = [&known](const ValuePtr& value) {
    if (value->kind == ValueKind::Tuple || value->kind == ValueKind::List)
      return llvm::all_of(value->items, known);
    return value->kind == ValueKind::Object || value->kind == ValueKind::Constant;
  };
  // A symbolic number is no concrete number NumPy could compute on (nor
  // can it in torch.export, strict or not): say so rather than specialize.
  std::function<bool(const ValuePtr&)> symbolic = [&symbolic](const ValuePtr& value) {
    if (value->kind == ValueKind::Tuple || value->kind == ValueKind::List)
      return llvm::any_of(value->items, symbolic);
    return value->kind == ValueKind::SymNum;
  };
  if (llvm::any_of(args, symbolic) ||
      llvm::any_of(kwargs, [&](const auto& kw) { return symbolic(kw.second); }))
    return captureError("calling NumPy's " + describeObject(object) +
                        " on a symbolic number (a size declared dynamic, or a number computed "
                        "from tensor data) is not supported: NumPy computes on concrete numbers "
                        "only, and torch.export refuses this call too; use math's or torch's "
                        "functions on it, or keep the size static");
  if (!llvm::all_of(args, known) ||
      !llvm::all_of(kwargs, [&](const auto& kw) { return known(kw.second); }))
    return captureError("calling NumPy's " + describeObject(object) +
                        " on values that are not constants is not supported; use torch's");
  llvm::Expected<PythonCallArguments> call = toPythonArguments(args, kwargs);
  if (!call)
    return call.takeError();
  PyRef result = PyRef::steal(PyObject_Call(object, call->args.get(), call->kwargs.get()));
  if (!result)
    return programError("calling " + describeObject(object));
  // A NumPy scalar keeps its NumPy type (NumpyConstants.h): a constant.
  // An array made from constants is a constant too: a fresh object no input
  // reaches, so it needs no guard. The program reads it as data (shapes,
  // index plans); item stores into it are refused as on any object, and a
  // tensor made from it is a tensor constant (small ones only).
  return values_.wrapReal(result.get(), nullptr);
}

llvm::Expected<ValuePtr> Interpreter::callObject(const ValuePtr& callee, std::vector<ValuePtr> args,
                                                 KeywordArgs kwargs) {
  PyObject* object = callee->object.get();
  // The end of a `with lock:` block (ThreadLocks.h): the lock was never
  // held over it.
  if (isThreadLockExit(object))
    return makeNone();
  // torch's dispatch-exclusion blocks: a stand-in, whose block's end does
  // nothing (DispatchExclusion.h).
  if (isDispatchExclusionExit(object))
    return makeNone();
  if (isDispatchExclusionClass(object) && args.empty() && kwargs.empty()) {
    llvm::Expected<PyRef> standIn = makeDispatchExclusionStandIn();
    if (!standIn)
      return standIn.takeError();
    return makeValue(ValueKind::Object, *standIn);
  }
  // The descriptor is new and reachable only from values capture holds:
  // making it for real is not a side effect.
  if (isDescriptorFactory(object))
    return callForReal(object, args, kwargs);
  // Methods of builtin types reached as real objects (`dict.fromkeys`,
  // `str.maketrans`): the method table.
  if (std::optional<llvm::Expected<ValuePtr>> called =
          callTableFunction(*this, object, args, kwargs))
    return std::move(*called);
  // math.sqrt(s), math.floor(s), ... of a number computed from tensor data:
  // a node of the graph (TensorNumbers.h).
  if (PyCFunction_Check(object) && kwargs.empty() && PyCFunction_GET_SELF(object) &&
      PyModule_Check(PyCFunction_GET_SELF(object)) &&
      llvm::StringRef(PyModule_GetName(PyCFunction_GET_SELF(object))) == "math")
    if (llvm::Expected<ValuePtr> number = functionOfDataNumbers(*this, object, args);
        !number || *number)
      return number;
  // math.ceil, math.floor and math.trunc of a symbolic size expression
  // (`math.ceil(capacity_fraction * num_tokens)`): CPython calls the
  // number's __ceil__, __floor__ or __trunc__, which torch's SymInt and
  // SymFloat compute as size expressions, with no guard; their other
  // functions would ask for a float and specialize.
  if (PyCFunction_Check(object) && kwargs.empty() && args.size() == 1 &&
      args[0]->kind == ValueKind::SymNum && PyCFunction_GET_SELF(object) &&
      PyModule_Check(PyCFunction_GET_SELF(object)) &&
      llvm::StringRef(PyModule_GetName(PyCFunction_GET_SELF(object))) == "math" &&
      llvm::is_contained(
          llvm::ArrayRef<llvm::StringRef>{"ceil", "floor", "trunc"},
          llvm::StringRef(reinterpret_cast<PyCFunctionObject*>(object)->m_ml->ml_name))) {
    reportLocation();
    PyRef result = PyRef::steal(PyObject_CallOneArg(object, args[0]->object.get()));
    if (!result)
      return programError("calling " + describeObject(object));
    if (llvm::Error error = checkDynamic())
      return error;
    return wrapFake(result.get());
  }
  // A NumPy scalar's methods compute on the immutable value, but for the
  // ones that write a file.
  if (std::optional<std::string> refused = nonPureNumpyScalarMethod(object))
    return captureError(*refused);
  bool constantArgs = allConstant(args) &&
                      llvm::all_of(kwargs, [](const auto& kw) { return allConstant({kw.second}); });
  // Pure functions of constants run in CPython: math functions, and
  // methods of immutable builtin values ("{}".format, str.join).
  bool pure = false;
  if (PyCFunction_Check(object)) {
    PyObject* self = PyCFunction_GET_SELF(object);
    pure = isPureModule(object) ||
           (self && (isImmutableBuiltinType(Py_TYPE(self)) || PyTuple_Check(self)));
  } else if (Py_IS_TYPE(object, &PyMethodDescr_Type)) {
    pure = isImmutableBuiltinType(reinterpret_cast<PyDescrObject*>(object)->d_type);
  } else if (isGradModeManager(object) ||
             (PyMethod_Check(object) && isGradModeManager(PyMethod_GET_SELF(object)))) {
    // Grad-mode managers and their __exit__ run for real (see BEFORE_WITH).
    pure = true;
  } else if (llvm::any_of(types_.pureClasses,
                          [&](const PyRef& type) { return type.get() == object; })) {
    pure = true;
  } else if (PyExceptionClass_Check(object)) {
    // Building an exception is harmless; raising it stops capture with its
    // message.
    pure = true;
  }
  // Run for real, an exception class written in Python runs the program's
  // code and a grad-mode manager switches torch's mode: neither can be
  // taken back from a speculated path.
  if (pure && constantArgs && recorder_.speculating()) {
    bool programClass =
        PyType_Check(object) &&
        (PyType_GetFlags(reinterpret_cast<PyTypeObject*>(object)) & Py_TPFLAGS_HEAPTYPE);
    bool gradMode = isGradModeManager(object) ||
                    (PyMethod_Check(object) && isGradModeManager(PyMethod_GET_SELF(object)));
    if (programClass || gradMode)
      if (llvm::Error refused =
              recorder_.irreversible("calling " + describeObject(object) + " for real"))
        return refused;
  }
  if (pure && constantArgs) {
    llvm::Expected<PythonCallArguments> call = toPythonArguments(args, kwargs);
    if (!call)
      return call.takeError();
    auto& [tuple, dict] = *call;
    PyRef result = PyRef::steal(PyObject_Call(object, tuple.get(), dict.get()));
    if (!result)
      return programError("calling " + describeObject(object));
    if (PyExceptionInstance_Check(result.get()))
      return makeValue(ValueKind::Object, result);
    return values_.wrapReal(result.get(), nullptr);
  }
  if (PyWeakref_CheckRef(object) && args.empty() && kwargs.empty()) {
    // Dereferencing a weak reference reads the program's state: the
    // referent is a value capture may already know (a module's parameter).
    PyObject* referent = PyWeakref_GetObject(object);
    if (ValuePtr known = values_.knownTensorInput(referent))
      return known;
    return values_.wrapReal(referent, nullptr);
  }
  if (object == types_.size.get())
    return constructSize(*this, args, kwargs);
  // A builtin class capture implements (list, tuple, dict), reached as a
  // class (`type(obj)(items)`, which dataclasses.asdict calls): the builtin.
  if (PyType_Check(object) && builtins_.contains(object)) {
    ValuePtr builtin = makeValue(ValueKind::Builtin, PyRef::borrow(object));
    return builtins_.find(object)(*this, builtin, args, kwargs);
  }
  if (object == types_.orderedDict.get()) {
    // An OrderedDict is a dict that keeps its type: built as dict() builds
    // one, it is a Dict value whose `object` is the class (AttributeReads.cpp
    // reads its methods from dict where they behave the same).
    BuiltinHandler dict = builtins_.find(reinterpret_cast<PyObject*>(&PyDict_Type));
    if (!dict)
      return captureError("dict() has no handler");
    llvm::Expected<ValuePtr> made = dict(*this, callee, args, kwargs);
    if (!made)
      return made.takeError();
    (*made)->object = types_.orderedDict;
    return made;
  }
  if (llvm::Expected<ValuePtr> numpy = callNumpyOnConstants(callee, args, kwargs); !numpy || *numpy)
    return numpy;
  // torch.autograd.Variable(x), torch.Tensor([1e10]), torch.LongTensor(ids),
  // torch.Tensor(2, 3): torch's legacy tensor constructors, in C, are
  // tensor operations like any other (a constant lifted into the graph, an
  // empty tensor, an alias of a tensor argument).
  // torch.FloatTensor, torch.LongTensor, ... are classes of one metaclass,
  // the type of types_.floatTensor.
  if (PyType_Check(object) &&
      (PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(object),
                        reinterpret_cast<PyTypeObject*>(types_.legacyVariableBase.get())) ||
       object == types_.tensor.get() || Py_IS_TYPE(object, Py_TYPE(types_.floatTensor.get()))))
    return callOracle(object, args, kwargs);
  // An enum class called with a known value looks a member up by its value
  // (`_ParameterKind(kind)`): no new object, nothing changed; it runs.
  if (PyType_Check(object) && args.size() == 1 && kwargs.empty() && isKnown(args[0])) {
    llvm::Expected<PyRef> enumType = importObject("enum.EnumType");
    if (!enumType)
      return enumType.takeError();
    if (PyObject_TypeCheck(object, reinterpret_cast<PyTypeObject*>(enumType->get())))
      return callForReal(object, args, kwargs);
  }
  // types.MappingProxyType over a dict (MappingProxies.cpp).
  if (object == reinterpret_cast<PyObject*>(&PyDictProxy_Type))
    return makeMappingProxy(std::move(args), kwargs);
  // functools.partial, made and called as _functools does (Partials.cpp).
  if (isPartialClass(object))
    return makePartial(callee, std::move(args), std::move(kwargs));
  if (isPartial(callee))
    return callPartial(callee, std::move(args), std::move(kwargs));
  if (PyType_Check(object)) {
    if (PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(object),
                         reinterpret_cast<PyTypeObject*>(types_.module.get())))
      return constructModule(callee, args, kwargs);
    // A parameter made in the call is a new tensor on every call, which no
    // graph input names (a module built in forward that makes one).
    if (PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(object),
                         reinterpret_cast<PyTypeObject*>(types_.parameter.get())))
      return captureError("making a parameter (" + describeObject(object) +
                          ") while capturing is not supported: it is made anew on every call, "
                          "and no graph input names it; " +
                          buildOnce("build it in __init__"));
    return construct(callee, std::move(args), std::move(kwargs));
  }
  // functools.lru_cache and functools.cache: a memo in front of a function
  // its user declares pure, so calling through it is calling the function.
  // The function is inlined; the memo is neither read nor filled.
  if (llvm::Expected<std::optional<ValuePtr>> wrapped = cachedFunction(*this, object); !wrapped)
    return wrapped.takeError();
  else if (*wrapped)
    return call(**wrapped, std::move(args), std::move(kwargs));
  if (llvm::Expected<std::optional<ValuePtr>> scripted = scriptedFunction(*this, object); !scripted)
    return scripted.takeError();
  else if (*scripted)
    return call(**scripted, std::move(args), std::move(kwargs));
  // A callable instance of a Python class: inline its __call__.
  PyRef callName = PyRef::steal(python::newStr("__call__"));
  PyObject* dunderCall = _PyType_Lookup(Py_TYPE(object), callName.get());
  if (dunderCall && PyFunction_Check(dunderCall)) {
    llvm::Expected<ValuePtr> function = values_.functionFromReal(dunderCall, nullptr);
    if (!function)
      return function.takeError();
    args.insert(args.begin(), callee);
    return call(*function, std::move(args), std::move(kwargs));
  }
  if (std::optional<std::string> script = torchScriptCallable(object))
    return captureError(*script);
  // An explicit acquire() (logging's _acquireLock, around making a new
  // logger, setting a level or adding a handler): only `with lock:` blocks
  // are followed (ThreadLocks.h).
  if (isThreadLock(object))
    return captureError("calling " + describeObject(object) +
                        " takes a threading lock outside a 'with' block, which capture does "
                        "not follow (logging takes one to change its loggers: setLevel, "
                        "addHandler, basicConfig); make that change outside the exported "
                        "function");
  return captureError("call to " + describeObject(object) +
                      " cannot be traced: it is not Python code, a torch operation or a "
                      "builtin capture models");
}

} // namespace dync::capture
