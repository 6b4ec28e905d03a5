//===- ValueBuilder.cpp - Real objects made values ------------------------===//
#include "frontend/capture/ValueBuilder.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/DictReads.h"
#include "frontend/capture/EntryFunction.h"
#include "frontend/capture/ListInstances.h"
#include "frontend/capture/ModuleHooks.h"
#include "frontend/capture/NumpyConstants.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/capture/TorchConstants.h"
#include "frontend/embedding/PyStrings.h"
#include "ir/BigIntGuard.h"

#include "llvm/ADT/ScopeExit.h"

#include <functional>
#include <memory>
#include <tuple>

namespace dync::capture {

using ir::Guard;
using ir::Source;
using python::PyRef;

namespace {

bool isImmutableConstant(PyObject* object) {
  return object == Py_None || object == Py_Ellipsis || object == Py_NotImplemented ||
         PyBool_Check(object) || PyLong_CheckExact(object) || PyFloat_CheckExact(object) ||
         PyComplex_CheckExact(object) || PyUnicode_CheckExact(object) ||
         PyBytes_CheckExact(object) || PyCode_Check(object) || PyRange_Check(object) ||
         PySlice_Check(object);
}

/// Whether a guard pins \p object by itself, so that giving it a source
/// only adds guards: constants (equals, none, type), functions (function,
/// builtin). Tensors and containers of them would become graph inputs.
/// Exact lists, tuples and dicts of such values keyed by constants
/// (dictKeyOf) are pinnable too, item by item (type, length or keys, then
/// each item): a closure cell or a
/// class attribute holding a list of constants is guarded, not assumed
/// unchanged. The depth bound keeps a self-referencing list finite.
bool isGuardPinnable(PyObject* object, int depth = 0) {
  if (isImmutableConstant(object) || Py_IS_TYPE(object, &PyFunction_Type) ||
      Py_IS_TYPE(object, &PyCFunction_Type))
    return true;
  if (depth > 8)
    return false;
  if (PyList_CheckExact(object) || PyTuple_CheckExact(object)) {
    PyObject* fast = object;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast); ++i)
      if (!isGuardPinnable(PySequence_Fast_GET_ITEM(fast, i), depth + 1))
        return false;
    return true;
  }
  if (PyDict_CheckExact(object)) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(object, &pos, &key, &value))
      if (!capture::dictKeyOf(key) || !isGuardPinnable(value, depth + 1))
        return false;
    return true;
  }
  return false;
}

/// Whether \p object is a plain object of a Python class (a config
/// dataclass, or a callable object such as a decorator's instance, torch's
/// autocast): not a module, class, tensor or nn.Module, its attributes found
/// by the generic lookup. Read through a source, its type is pinned and each
/// attribute capture reads from it is guarded by value, as for one read
/// directly from the frame; without one, only its type would be, and the
/// state it keeps could change unseen.
bool isConfigObject(PyObject* object, const TorchTypes& types) {
  PyTypeObject* type = Py_TYPE(object);
  if (PyModule_Check(object) || PyType_Check(object) || !(type->tp_flags & Py_TPFLAGS_HEAPTYPE) ||
      type->tp_getattro != PyObject_GenericGetAttr)
    return false;
  for (PyObject* excluded : {types.tensor.get(), types.module.get()}) {
    int is = PyObject_IsInstance(object, excluded);
    if (is < 0)
      PyErr_Clear();
    if (is != 0)
      return false;
  }
  return true;
}

/// Whether \p object read through a class attribute or a closure cell can
/// keep the source: what a guard pins, or a tensor of exactly torch.Tensor
/// or nn.Parameter, which becomes a graph input with its tensor guard (as a
/// module global's does), read at each call rather than assumed unchanged.
/// An nn.Module keeps it too (a lambda closing over a submodule,
/// `f = lambda x: m.proj(m.act(x))` stored on self): its parameters and
/// buffers are then graph inputs read through the cell, and its attributes
/// are guarded as those of a submodule reached from self.
bool keepsReadSource(PyObject* object, const TorchTypes& types) {
  PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(object));
  if (isGuardPinnable(object) || type == types.tensor.get() || type == types.parameter.get() ||
      isConfigObject(object, types))
    return true;
  int module = PyObject_IsInstance(object, types.module.get());
  if (module < 0)
    PyErr_Clear();
  return module == 1;
}

/// Whether an object of `type`, a tuple subclass (a named tuple, a
/// structseq-like class written in Python), gives tuple's own length, items
/// and iteration: then its items read as a tuple's, each through its own
/// source, as the native readers read them (dync_py_sequence_item).
bool readsAsTuple(PyTypeObject* type) {
  for (const char* name : {"__getitem__", "__len__", "__iter__"}) {
    PyRef key = PyRef::steal(python::newStr(name));
    if (_PyType_Lookup(type, key.get()) != PyDict_GetItemString(PyTuple_Type.tp_dict, name))
      return false;
  }
  return true;
}

/// Whether \p function is the static method of torch._C._VariableFunctions
/// of its name (what torch._VF hands out).
bool isVariableFunctionOf(PyObject* function, PyObject* variableFunctions) {
  const char* name = reinterpret_cast<PyCFunctionObject*>(function)->m_ml->ml_name;
  PyRef held = PyRef::steal(PyObject_GetAttrString(variableFunctions, name));
  PyErr_Clear();
  return held.get() == function;
}

/// The decimal digits of exact int \p object, read from its two's
/// complement: str() of an int longer than sys.get_int_max_str_digits()
/// raises, and guards compare the bytes anyway.
std::optional<std::string> decimalOfInt(PyObject* object) {
  size_t bits = _PyLong_NumBits(object);
  if (bits == static_cast<size_t>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    return std::nullopt;
  }
  std::vector<uint8_t> bytes(bits / 8 + 1);
  if (_PyLong_AsByteArray(reinterpret_cast<PyLongObject*>(object), bytes.data(), bytes.size(),
                          /*little_endian=*/1, /*is_signed=*/1) < 0) {
    PyErr_Clear();
    return std::nullopt;
  }
  return ir::decimalOfTwosComplement(bytes);
}

} // namespace

SourcePtr ValueBuilder::classReadSource(const SourcePtr& base, llvm::StringRef name,
                                        PyObject* classValue) {
  if (!base)
    return nullptr;
  // An instance attribute of that name would be found first.
  guards_.add(Guard::absent(Source::attr(base, name)));
  return classValue && keepsReadSource(classValue, types_) ? Source::classAttr(base, name)
                                                           : nullptr;
}

bool ValueBuilder::keepsClassReadSource(PyObject* value) const {
  return keepsReadSource(value, types_);
}

SourcePtr ValueBuilder::classOfSource(const SourcePtr& base, PyObject* type, llvm::StringRef name,
                                      PyObject* value) {
  if (!base || !PyType_Check(type))
    return nullptr;
  PyRef nameObject = PyRef::steal(python::newStr(name));
  PyObject* held = nameObject
                       ? _PyType_Lookup(reinterpret_cast<PyTypeObject*>(type), nameObject.get())
                       : nullptr;
  if (!held || held != value || !keepsReadSource(value, types_)) {
    PyErr_Clear();
    return nullptr;
  }
  return Source::classAttr(base, name);
}

SourcePtr ValueBuilder::moduleReadSource(const SourcePtr& source, PyObject* module,
                                         PyObject* value) {
  if (!source || !PyModule_Check(module))
    return source;
  const char* name = PyModule_GetName(module);
  if (!name)
    PyErr_Clear();
  llvm::StringRef moduleName(name ? name : "");
  bool library = moduleName == "torch" || moduleName.starts_with("torch.");
  bool guardOnly = source->root().kind() == Source::Kind::Module;
  if (!library && !guardOnly)
    return source;
  // A function replaced on the module (`torch.relu = torch.sigmoid`,
  // `F.gelu = ...`) changes what the program computes: the function or
  // builtin guard pins it. Modules carry the source on to their reads.
  // torch's classes are its API, not the program's state: no guard.
  if (PyModule_Check(value) || Py_IS_TYPE(value, &PyFunction_Type) ||
      Py_IS_TYPE(value, &PyCFunction_Type))
    return source;
  // torch's scalar constants (torch.pi, torch.e, torch.inf, a flag of one of
  // its modules) are module attributes like any other: the graph folds in
  // the value read, so an equals guard pins it.
  if (library && (PyBool_Check(value) || PyLong_CheckExact(value) || PyFloat_CheckExact(value) ||
                  PyUnicode_CheckExact(value) || value == Py_None))
    return source;
  if (!library && isGuardPinnable(value))
    return source;
  // A class another module's function reads from its own globals (it
  // constructs it, checks isinstance against it, catches it): a `class`
  // guard pins the name to it, as for the entry module's globals, and what
  // construction runs is read through it. Without a source, rebinding
  // `helpers.Block` after export went unseen.
  if (!library && PyType_Check(value))
    return source;
  // A dtype, device, layout or memory format, torch's own (`torch.float32`)
  // or another module's: which one it is decides the graph, and a module
  // attribute may be reassigned; wrapReal pins it with `equals`.
  PyObject* valueType = reinterpret_cast<PyObject*>(Py_TYPE(value));
  if (valueType == types_.dtype.get() || valueType == types_.device.get() ||
      valueType == types_.layout.get() || valueType == types_.memoryFormat.get())
    return source;
  // A tensor another module's function reads from its own globals: a graph
  // input the rewritten code reads from sys.modules as the guards do.
  if (!library && guardOnly &&
      (Py_TYPE(value) == reinterpret_cast<PyTypeObject*>(types_.tensor.get()) ||
       Py_TYPE(value) == reinterpret_cast<PyTypeObject*>(types_.parameter.get())))
    return source;
  // A library's state object (an instance of its own class with a plain
  // instance dict): its reads are guarded through the module, and the
  // attributes a call sets and restores are read back through it
  // (RealAttributes.cpp).
  PyTypeObject* type = Py_TYPE(value);
  if (!library && (type->tp_flags & Py_TPFLAGS_HEAPTYPE) && !PyType_Check(value) &&
      type->tp_setattro == PyObject_GenericSetAttr && type->tp_dictoffset != 0 &&
      PyObject_IsInstance(value, types_.tensor.get()) == 0)
    return source;
  PyErr_Clear();
  return nullptr;
}

SourcePtr ValueBuilder::moduleGlobalSource(PyObject* globals, llvm::StringRef global,
                                           PyObject* value) {
  PyObject* nameObject = PyDict_GetItemString(globals, "__name__");
  if (!nameObject || !PyUnicode_CheckExact(nameObject))
    return nullptr;
  PyObject* module = PyImport_GetModule(nameObject);
  if (!module) {
    PyErr_Clear();
    return nullptr;
  }
  PyRef owned = PyRef::steal(module);
  if (!PyModule_Check(module) || PyModule_GetDict(module) != globals)
    return nullptr;
  std::optional<std::string> name = python::utf8Of(nameObject);
  return name ? moduleReadSource(Source::attr(Source::module(*name), global), module, value)
              : nullptr;
}

void ValueBuilder::guardNoModuleHooks(const ValuePtr& module) {
  // What nn.Module._call_impl consults before calling forward directly. A
  // table with entries has its keys guarded where its hooks are read
  // (ModuleHooks.cpp).
  if (module->source)
    for (const char* table :
         {"_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks"})
      if (!hookTableHasEntries(module->object.get(), table, /*global=*/false))
        guards_.add(Guard::empty(Source::attr(module->source, table)));
  SourcePtr torchModule = Source::module("torch.nn.modules.module");
  for (const char* table : {"_global_forward_hooks", "_global_forward_pre_hooks",
                            "_global_backward_hooks", "_global_backward_pre_hooks"})
    if (!hookTableHasEntries(module->object.get(), table, /*global=*/true))
      guards_.add(Guard::empty(Source::attr(torchModule, table)));
  if (!module->source)
    return;
  // The path from a call to forward: type(m).__call__ (nn.Module's
  // _wrapped_call_impl), which runs m._compiled_call_impl when the instance
  // has one (nn.Module.compile sets it) and else m._call_impl. Capture
  // inlined forward as torch's own functions would reach it; any of them
  // replaced, on the class or the instance, must miss.
  guards_.add(Guard::absent(Source::attr(module->source, "_compiled_call_impl")));
  PyTypeObject* type = Py_TYPE(module->object.get());
  for (const char* name : {"__call__", "_call_impl"}) {
    PyRef nameObject = PyRef::steal(PyUnicode_FromString(name));
    PyObject* classAttr = nameObject ? _PyType_Lookup(type, nameObject.get()) : nullptr;
    if (!classAttr || !PyFunction_Check(classAttr))
      continue;
    // Python looks special methods up on the type alone: no `absent` for
    // __call__.
    SourcePtr source = llvm::StringRef(name) == "__call__"
                           ? Source::classAttr(module->source, name)
                           : classReadSource(module->source, name, classAttr);
    llvm::Expected<ValuePtr> pinned = functionFromReal(classAttr, source);
    if (!pinned)
      llvm::consumeError(pinned.takeError());
  }
}

void ValueBuilder::guardConstant(PyObject* object, const SourcePtr& source) {
  if (!source)
    return;
  // Equals guards compare with what the IR can spell: exact bools, ints
  // (beyond 64 bits too, ir/BigIntGuard.h), floats and strs. A str with no
  // UTF-8 form keeps its type pinned; the value is assumed unchanged.
  PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(object));
  if (object == Py_None) {
    guards_.add(Guard::none(source));
  } else if (PyBool_Check(object)) {
    guards_.add(Guard::equals(source, ir::Argument::boolean(object == Py_True)));
  } else if (PyLong_CheckExact(object)) {
    int overflow = 0;
    long long value = PyLong_AsLongLongAndOverflow(object, &overflow);
    if (overflow) {
      std::optional<std::string> decimal = decimalOfInt(object);
      guards_.add(decimal ? ir::equalsBigInt(source, std::move(*decimal))
                          : typeGuard(source, type));
    } else
      guards_.add(
          Guard::equals(source, ir::Argument::sym(oracle_.builder().context().constant(value))));
  } else if (PyFloat_CheckExact(object)) {
    guards_.add(Guard::equals(source, ir::Argument::floating(PyFloat_AS_DOUBLE(object))));
  } else if (PyUnicode_CheckExact(object)) {
    std::optional<std::string> text = python::utf8Of(object);
    guards_.add(text ? Guard::equals(source, ir::Argument::string(std::move(*text)))
                     : typeGuard(source, type));
  }
}

llvm::Expected<ValuePtr> ValueBuilder::tensorInput(PyObject* real, SourcePtr source,
                                                   llvm::ArrayRef<oracle::DynamicDim> dims) {
  noteIdentity(real, source);
  auto it = tensorInputs_.find(real);
  if (it != tensorInputs_.end())
    return it->second.second;
  if (llvm::Error refused = recorder_.irreversible("making a graph input"))
    return refused;
  if (!source)
    return captureError("a tensor that was not reached from the frame's inputs (" +
                        describeObject(real) + ") cannot be a graph input");
  if (readsThroughHookTable(*source))
    return captureError("the tensor " + source->str() +
                        " is read through a module hook (a closure cell or attribute of the "
                        "hook); tensors held by hooks are not supported as graph inputs yet");
  // The tensor guard checks these: the graph computes on plain dense
  // tensors of exactly torch.Tensor or nn.Parameter.
  PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(real));
  if (type != types_.tensor.get() && type != types_.parameter.get())
    return captureError(source->str() + " is a tensor of class '" + qualifiedTypeName(type) +
                        "', a subclass of torch.Tensor; tensor subclasses are not supported as "
                        "inputs yet");
  for (const char* bit : {"is_neg", "is_conj"}) {
    PyRef set = PyRef::steal(PyObject_CallMethod(real, bit, nullptr));
    if (!set)
      return pythonError(std::string("reading ") + bit + "() of " + source->str());
    if (set.get() == Py_True)
      return captureError(source->str() + " has its " +
                          (llvm::StringRef(bit) == "is_neg" ? "negative" : "conjugate") +
                          " bit set; resolve it first (x.resolve_neg(), x.resolve_conj()): lazy "
                          "negative and conjugate views are not supported as inputs yet");
  }
  llvm::Expected<PyRef> fake =
      oracle_.addTensorInput(real, source->valueName(), source->str(), dims);
  if (!fake)
    return fake.takeError();
  ValuePtr value = makeValue(ValueKind::Tensor, std::move(*fake), source);
  tensorInputs_[real] = {PyRef::borrow(real), value};
  inputOrder_.push_back(value);
  return value;
}

// --- The entry function's closure (EntryFunction.h) ---
namespace {

/// The entry function while wrapEntryFunction wraps it: capture runs on one
/// thread, under the GIL, one entry at a time.
PyObject* entryFunctionBeingWrapped = nullptr;

/// `L['name']` for free variable \p index of \p fn's code: the frame slot
/// COPY_FREE_VARS fills from closure cell \p index.
SourcePtr entryFreeVariableSource(PyFunctionObject* fn, Py_ssize_t index) {
  auto* code = reinterpret_cast<PyCodeObject*>(fn->func_code);
  Py_ssize_t slot = code->co_nlocalsplus - code->co_nfreevars + index;
  if (index >= code->co_nfreevars || slot >= PyTuple_GET_SIZE(code->co_localsplusnames))
    return nullptr;
  std::optional<std::string> name =
      python::utf8Of(PyTuple_GET_ITEM(code->co_localsplusnames, slot));
  return name ? Source::local(*name) : nullptr;
}

} // namespace

llvm::Expected<ValuePtr> wrapEntryFunction(ValueBuilder& values, PyObject* function) {
  entryFunctionBeingWrapped = function;
  auto reset = llvm::make_scope_exit([] { entryFunctionBeingWrapped = nullptr; });
  return values.wrapReal(function, nullptr);
}
// --- end of the entry function's closure ---

/// The function that a wrapper of torch's compile machinery stands for, or
/// \p function itself (borrowed). torch rebinds some of its own functions on
/// import to wrappers that only keep torch.compile from tracing into them:
/// `torch.manual_seed` becomes `torch._disable_dynamo(torch.random.manual_seed)`
/// when torch._dynamo is first imported, and torch.compile's first run
/// wraps torch.jit's tracers and the optimizers' steps in
/// `torch._dynamo.disable`. Eager runs the wrapped function as it is, and
/// whether a process imported torch._dynamo must not decide what a guard
/// says, so the wrapper is read as the function it wraps: capture runs that
/// one, and the guards, which follow such wrappers natively too
/// (ShimPyObjects.c), pin it. A function decorated with torch.compile
/// (`@torch.compile`, `torch.compile(f, fullgraph=True)`) is torch._dynamo's
/// wrapper marked `_torchdynamo_orig_callable`: eager runs the code dynamo
/// compiled from the wrapped function, which computes what that function
/// does (as a TorchScript function's compiled form does), so it is read
/// the same way, as torch.export inlines it. A wrapper is torch's when it is
/// defined in torch._compile (`_disable_dynamo`) or is torch._dynamo's
/// marked so: a user's own replacement, even one made with functools.wraps,
/// is defined elsewhere and stays itself.
///
/// The artifact's guards make the same test (unwrap_dynamo_disabled in
/// runtime/shim/ShimPyObjects.c), and must: the runtime links neither
/// capture nor anything of the compiler, and capture does not link the
/// runtime (utils/check-layering.py), so neither can call the other. The
/// runtime's reads the dicts without running code, as every guard does.
/// test/e2e/test_torch_compiled_calls.py keeps the two in step: each call
/// through such a wrapper, in a fresh process where the wrappers are made
/// anew, must hit the graph whose guards describe the wrapped function.
static PyObject* unwrapDynamoDisabled(PyObject* function) {
  for (int depth = 0; depth < 4 && Py_IS_TYPE(function, &PyFunction_Type); ++depth) {
    auto* fn = reinterpret_cast<PyFunctionObject*>(function);
    if (!fn->func_dict || !PyDict_Check(fn->func_dict) || !PyDict_Check(fn->func_globals))
      return function;
    PyObject* module = PyDict_GetItemString(fn->func_globals, "__name__");
    std::optional<std::string> name =
        module && PyUnicode_CheckExact(module) ? python::utf8Of(module) : std::nullopt;
    if (!name)
      return function;
    PyObject* disabled = PyDict_GetItemString(fn->func_dict, "_torchdynamo_disable");
    bool compiled = PyDict_GetItemString(fn->func_dict, "_torchdynamo_orig_callable") != nullptr;
    bool torchWrapper =
        *name == "torch._compile" ||
        (llvm::StringRef(*name).starts_with("torch._dynamo.") && (disabled == Py_True || compiled));
    PyObject* wrapped = PyDict_GetItemString(fn->func_dict, "__wrapped__");
    if (!torchWrapper || !wrapped)
      return function;
    function = wrapped;
  }
  return function;
}

llvm::Expected<ValuePtr> ValueBuilder::functionFromReal(PyObject* function, SourcePtr source) {
  function = unwrapDynamoDisabled(function);
  if (!PyFunction_Check(function))
    return wrapReal(function, source);
  if (auto it = functionsBeingWrapped_.find(function); it != functionsBeingWrapped_.end())
    return it->second;
  // A function made while capturing and made real for a class defined
  // while capturing (RealObjects.cpp): the symbolic one is the program's.
  if (auto it = realFunctions_.find(function); it != realFunctions_.end())
    return it->second;
  auto* fn = reinterpret_cast<PyFunctionObject*>(function);
  // A function read through a source is pinned by what the guards can
  // compare in any process: an exact function with the same module, code
  // qualname and first line (the code is then the one capture ran, unless
  // the module was reloaded from another file).
  if (source) {
    auto* code = reinterpret_cast<PyCodeObject*>(fn->func_code);
    std::optional<std::string> module = fn->func_module && PyUnicode_CheckExact(fn->func_module)
                                            ? python::utf8Of(fn->func_module)
                                            : std::nullopt;
    std::optional<std::string> qualname = python::utf8Of(code->co_qualname);
    if (Py_IS_TYPE(function, &PyFunction_Type) && module && !module->empty() && qualname)
      guards_.add(Guard::function(source, *module, *qualname, code->co_firstlineno));
    else
      guards_.add(typeGuard(source, reinterpret_cast<PyObject*>(Py_TYPE(function))));
  }
  ValuePtr value = makeValue(ValueKind::Function, PyRef::borrow(function), source);
  functionsBeingWrapped_[function] = value;
  auto done = llvm::make_scope_exit([&] { functionsBeingWrapped_.erase(function); });
  value->code = PyRef::borrow(fn->func_code);
  value->globals = PyRef::borrow(fn->func_globals);
  value->entryGlobals = fn->func_globals == entryGlobals_;
  value->qualname = python::utf8Of(fn->func_qualname).value_or("<function>");
  // A default that is a tensor or a config object is read through its slot,
  // like a closure cell's contents: the tensor becomes a graph input with its
  // tensor guard, the object's attributes that capture reads are guarded by
  // value. Constants and functions are guarded where a call uses them
  // (guardDefaultsRead).
  auto defaultSource = [&](PyObject* item, const char* slot,
                           const std::function<SourcePtr(SourcePtr)>& within) -> SourcePtr {
    if (!source || isGuardPinnable(item) || !keepsReadSource(item, types_))
      return nullptr;
    return within(Source::attr(source, slot));
  };
  if (fn->func_defaults) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(fn->func_defaults); ++i) {
      PyObject* itemObject = PyTuple_GET_ITEM(fn->func_defaults, i);
      llvm::Expected<ValuePtr> item =
          wrapReal(itemObject, defaultSource(itemObject, "__defaults__", [&](SourcePtr defaults) {
                     // The length decides which parameters the defaults fill.
                     guards_.add(Guard::lengthIs(defaults, PyTuple_GET_SIZE(fn->func_defaults)));
                     return Source::index(defaults, i);
                   }));
      if (!item)
        return item.takeError();
      value->items.push_back(*item);
    }
  }
  if (fn->func_kwdefaults) {
    PyObject *key, *item;
    Py_ssize_t pos = 0;
    while (PyDict_Next(fn->func_kwdefaults, &pos, &key, &item)) {
      std::optional<std::string> name =
          PyUnicode_CheckExact(key) ? python::utf8Of(key) : std::nullopt;
      llvm::Expected<ValuePtr> wrapped = wrapReal(
          item,
          name ? defaultSource(item, "__kwdefaults__",
                               [&](SourcePtr defaults) { return Source::key(defaults, *name); })
               : nullptr);
      if (!wrapped)
        return wrapped.takeError();
      value->entries.emplace_back(makeConstant(PyRef::borrow(key)), *wrapped);
    }
  }
  if (fn->func_closure) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(fn->func_closure); ++i) {
      PyObject* contents = PyCell_GET(PyTuple_GET_ITEM(fn->func_closure, i));
      ValuePtr cellValue;
      if (contents) {
        // What the cell holds is guarded like any value read through a
        // source, when a guard can pin it without it becoming an input.
        SourcePtr cellSource =
            source && keepsReadSource(contents, types_) ? Source::cell(source, i) : nullptr;
        // The entry's own cells are the frame's free variables (EntryFunction.h).
        if (!source && function == entryFunctionBeingWrapped && keepsReadSource(contents, types_))
          cellSource = entryFreeVariableSource(fn, i);
        llvm::Expected<ValuePtr> wrapped = wrapReal(contents, cellSource);
        if (!wrapped)
          return wrapped.takeError();
        cellValue = *wrapped;
      }
      // The real cell, which the program's assignments must not miss
      // (Interpreter::checkCellAssignment).
      ValuePtr cell = makeCell(cellValue);
      cell->object = PyRef::borrow(PyTuple_GET_ITEM(fn->func_closure, i));
      value->closure.push_back(std::move(cell));
    }
  }
  return value;
}

void ValueBuilder::guardDefaultsRead(const Value& function, const DefaultsRead& read) {
  PyObject* real = function.object.get();
  if (!function.source || !real || !Py_IS_TYPE(real, &PyFunction_Type) ||
      (read.positional.empty() && read.keywordOnly.empty()))
    return;
  auto* fn = reinterpret_cast<PyFunctionObject*>(real);
  // A default that holds a constant or a function is pinned by its guards;
  // anything else keeps its type pinned, its state assumed unchanged (as a
  // closure cell's).
  auto guardItem = [&](PyObject* item, SourcePtr source) {
    if (!isGuardPinnable(item)) {
      guards_.add(typeGuard(source, reinterpret_cast<PyObject*>(Py_TYPE(item))));
      return;
    }
    llvm::Expected<ValuePtr> pinned = wrapReal(item, std::move(source));
    if (!pinned)
      llvm::consumeError(pinned.takeError());
  };
  if (!read.positional.empty() && fn->func_defaults) {
    // The length decides which parameters the defaults fill.
    SourcePtr defaults = Source::attr(function.source, "__defaults__");
    guards_.add(Guard::lengthIs(defaults, PyTuple_GET_SIZE(fn->func_defaults)));
    for (size_t index : read.positional)
      if (static_cast<Py_ssize_t>(index) < PyTuple_GET_SIZE(fn->func_defaults))
        guardItem(PyTuple_GET_ITEM(fn->func_defaults, static_cast<Py_ssize_t>(index)),
                  Source::index(defaults, static_cast<int64_t>(index)));
  }
  if (!read.keywordOnly.empty() && fn->func_kwdefaults && PyDict_Check(fn->func_kwdefaults)) {
    SourcePtr defaults = Source::attr(function.source, "__kwdefaults__");
    for (const std::string& name : read.keywordOnly)
      if (PyObject* item = PyDict_GetItemString(fn->func_kwdefaults, name.c_str()))
        guardItem(item, Source::key(defaults, name));
  }
}

/// The caller's list or dict: a change in place is replayed on it after the
/// graph (SideEffects.cpp), and a read after a change sees the changed
/// value. Its guards were installed above, from the real object, which
/// capture never changes: they are about the call's entry.
ValuePtr ValueBuilder::callersContainer(ValuePtr value, PyObject* real) {
  value->realContainer = PyRef::borrow(real);
  if (changedContainers_ && real != wholeReadOf_)
    if (ValuePtr changed = changedContainers_(real))
      return changed;
  return value;
}

llvm::Expected<ValuePtr> ValueBuilder::wrapReal(PyObject* object, SourcePtr source) {
  // Two sources that reach one object are pinned as such (SourceIdentity.cpp).
  noteIdentity(object, source);
  // An int inside an argument declared dynamic is a symbol, not a constant.
  if (std::optional<llvm::Expected<ValuePtr>> declared = declaredIntAt(object, source))
    return std::move(*declared);
  if (isImmutableConstant(object)) {
    guardConstant(object, source);
    return makeConstant(PyRef::borrow(object), source);
  }
  // A NumPy scalar made while capturing is an immutable constant of its
  // NumPy type (NumpyConstants.h).
  if (!source && isNumpyScalar(object))
    return makeConstant(PyRef::borrow(object));
  PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(object));
  if (std::optional<TorchConstantKind> kind = torchConstantKind(object, types_)) {
    // Which dtype or device it is decides the graph: `equals` pins it
    // (TorchConstants.h). One the IR cannot spell (a float8 dtype) keeps
    // only its type pinned: programs name them in dtype tables they never
    // use, and refusing those reads would refuse the programs.
    if (source) {
      std::optional<ir::Argument> constant = torchConstantArgument(object, *kind);
      guards_.add(constant ? Guard::equals(source, std::move(*constant)) : typeGuard(source, type));
    }
    return makeConstant(PyRef::borrow(object), source);
  }
  // A dict the program may read only some entries of: they are read when
  // the program reads them (UnreadDicts.cpp).
  if (unreadListReads_ && source && PyDict_Check(object))
    if (ValuePtr unread = unreadDict(object, source))
      return unread;
  // A real object of a dict subclass (an OrderedDict, a defaultdict, a
  // class deriving from them) read through a source: its items are sourced
  // and guarded as an exact dict's are (ValueBuilderDicts.cpp).
  if (source && PyDict_Check(object) && !PyDict_CheckExact(object))
    if (std::optional<llvm::Expected<ValuePtr>> read = wrapDictObject(object, source))
      return std::move(*read);
  // An object of a class deriving from list that reads its items as a list
  // does is read as one, keeping its class (ListInstances.cpp); one with
  // instance attributes is refused, since a list value has no store for
  // them.
  bool listObject = !PyList_CheckExact(object) && PyList_Check(object) &&
                    isListClass(reinterpret_cast<PyTypeObject*>(type)) &&
                    readsAsList(reinterpret_cast<PyTypeObject*>(type)) &&
                    ownSpecialMethod(reinterpret_cast<PyTypeObject*>(type)).empty();
  if (listObject) {
    PyObject** dictPointer = _PyObject_GetDictPtr(object);
    if (dictPointer && *dictPointer && PyDict_Size(*dictPointer) > 0)
      return captureError((source ? source->str() : std::string("an object")) + " is a " +
                          qualifiedTypeName(type) +
                          " with instance attributes; objects of list subclasses are read as "
                          "lists, which hold no attributes, so this is not supported yet");
  }
  // An object of any list subclass whose length, item reads, iteration
  // and item stores are list's has its items read as a list's, each through
  // its own source (the native guards read them as list's too); one whose
  // class reads or stores items with methods of its own cannot be guarded
  // item by item, and is refused rather than assumed unchanged.
  bool listItems = listObject || (PyList_Check(object) && !PyList_CheckExact(object) &&
                                  readsAsList(reinterpret_cast<PyTypeObject*>(type)));
  if (source && PyList_Check(object) && !PyList_CheckExact(object) && !listItems)
    return captureError(source->str() + " is a " + qualifiedTypeName(type) +
                        " whose class reads or stores its items with methods of its own "
                        "(__getitem__, __len__, __iter__ or __setitem__); guards cannot read its "
                        "items as the program does, so this is not supported yet");
  // A tuple subclass that reads its items as tuple does (a named tuple) is
  // read item by item as an exact tuple is, with its class pinned: the
  // class fixes what `[i]`, len() and iteration give.
  bool tupleItems = PyTuple_Check(object) && !PyTuple_CheckExact(object) &&
                    readsAsTuple(reinterpret_cast<PyTypeObject*>(type));
  // Items have sources only in exact lists, tuples and dicts (keys that are
  // constants, dictKeyOf), the
  // list and tuple objects above and the dict objects of wrapDictObject: a
  // subclass may read items differently (see ir/Source.h). Any other tuple
  // subclass (immutable) read through a source has its type pinned.
  if (source && PyTuple_Check(object) && !PyTuple_CheckExact(object) && !tupleItems)
    guards_.add(typeGuard(source, type));
  // A tensor in such a container (a tuple subclass with item methods of its
  // own) would be a graph input without a source; say what to pass instead.
  if (source && !PyTuple_CheckExact(object) && !PyList_CheckExact(object) && !listItems &&
      !tupleItems && !PyDict_CheckExact(object) &&
      (PyTuple_Check(object) || PyList_Check(object) || PyDict_Check(object))) {
    PyRef values =
        PyRef::steal(PyDict_Check(object) ? PyDict_Values(object) : PySequence_List(object));
    if (!values)
      return pythonError("reading the items of " + source->str());
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(values.get()); ++i)
      if (PyObject_IsInstance(PyList_GET_ITEM(values.get(), i), types_.tensor.get()) == 1)
        return captureError(source->str() + " is a " + qualifiedTypeName(type) +
                            " holding tensors, whose class reads its items with methods of its "
                            "own (__getitem__, __len__ or __iter__); guards cannot read its items "
                            "as the program does, so such inputs are not supported yet: pass a "
                            "plain " +
                            (PyDict_Check(object) ? "dict" : "tuple") + " instead");
  }
  // A list the program may only append to: its items are read when the
  // program first reads the list (UnreadLists.cpp).
  if (unreadListReads_ && source && PyList_CheckExact(object))
    return unreadList(object, source);
  SourcePtr itemsSource =
      PyTuple_CheckExact(object) || PyList_CheckExact(object) || listItems || tupleItems ? source
                                                                                         : nullptr;
  // Capture reads an exact container's items one by one, each through its
  // own source: pin the type and the length too, so that a call with more
  // or fewer items (or a dict with other keys) misses the guards rather than
  // running a graph that saw another container.
  if (source && (itemsSource || PyDict_CheckExact(object))) {
    guards_.add(typeGuard(source, type));
    // A dict's keys, in order and with their types, say which entries
    // capture read and in what order iterating it yields them; a dict with
    // a key that is not such a constant (an object, an enum member) keeps
    // its length pinned only, and so do nn.Module's hook tables, keyed by
    // handle ids that differ from process to process (ModuleHooks.cpp
    // guards them): their entries have no sources.
    std::optional<std::vector<ir::DictKey>> keys =
        PyDict_CheckExact(object) && !capture::namesHookTable(*source) ? capture::dictKeys(object)
                                                                       : std::nullopt;
    guards_.add(keys ? Guard::keysAre(source, *keys)
                     : Guard::lengthIs(source, PyObject_Length(object)));
  }
  // A list or dict read without a source that the program changed in place
  // through another read of it is the changed value (one object, one value).
  if (!source && (PyList_CheckExact(object) || PyDict_CheckExact(object)) && changedContainers_)
    if (ValuePtr changed = changedContainers_(object))
      return changed;
  if (PyTuple_Check(object)) {
    std::vector<ValuePtr> items;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(object); ++i) {
      llvm::Expected<ValuePtr> item = wrapReal(
          PyTuple_GET_ITEM(object, i), itemsSource ? Source::index(itemsSource, i) : nullptr);
      if (!item)
        return item.takeError();
      items.push_back(*item);
    }
    ValuePtr value = makeTuple(std::move(items));
    value->source = source;
    if (!PyTuple_CheckExact(object))
      value->object = PyRef::borrow(type);
    return value;
  }
  if (PyList_Check(object)) {
    std::vector<ValuePtr> items;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(object); ++i) {
      llvm::Expected<ValuePtr> item = wrapReal(
          PyList_GET_ITEM(object, i), itemsSource ? Source::index(itemsSource, i) : nullptr);
      if (!item)
        return item.takeError();
      items.push_back(*item);
    }
    ValuePtr value = makeList(std::move(items));
    value->source = source;
    if (listObject)
      value->object = PyRef::borrow(type);
    if (itemsSource)
      return callersContainer(std::move(value), object);
    // Read without a source: still the real list, which a change in place
    // must not silently leave alone (SideEffects.cpp refuses it).
    if (!source)
      value->realContainer = PyRef::borrow(object);
    return value;
  }
  if (PyDict_CheckExact(object)) {
    ValuePtr value = makeValue(ValueKind::Dict, {}, source);
    // Each entry through its key, when the keys guard above pins them all.
    bool keyed = source && !capture::namesHookTable(*source) && capture::dictKeys(object);
    PyObject *key, *item;
    Py_ssize_t pos = 0;
    for (int64_t position = 0; PyDict_Next(object, &pos, &key, &item); ++position) {
      // A key that is an object (a UUID, an object of the program's class)
      // is reached through its position, so that a source reaching the same
      // object (`TABLE[KEY]`, the global naming the very key) is pinned to
      // it by a `same` guard, whichever was read first: dict finds such a
      // key by identity, running no __eq__ whose reads guards could check.
      // Tensors and modules are left out: their sources are read by the
      // rewritten code too, which reads no dict positions.
      if (source && !keyed && PyObject_IsInstance(key, types_.tensor.get()) == 0 &&
          PyObject_IsInstance(key, types_.module.get()) == 0)
        noteIdentity(key, Source::keyAt(source, position));
      PyErr_Clear();
      std::optional<ir::DictKey> name = keyed ? capture::dictKeyOf(key) : std::nullopt;
      llvm::Expected<ValuePtr> wrapped =
          wrapReal(item, name ? Source::item(source, *name) : nullptr);
      if (!wrapped)
        return wrapped.takeError();
      value->entries.emplace_back(makeConstant(PyRef::borrow(key)), *wrapped);
    }
    // An object's `__dict__` (vars(obj)) or a module's globals as the
    // program's assignments left them (ChangedState.cpp).
    overlayAssignedEntries(*value, object);
    if (source)
      return callersContainer(std::move(value), object);
    value->realContainer = PyRef::borrow(object);
    return value;
  }
  if (PyObject_IsInstance(object, types_.tensor.get()) == 1)
    return tensorInput(object, source);
  if (PyObject_IsInstance(object, types_.module.get()) == 1) {
    // A module reached without a source (a child of a container the program
    // built from modules it read, `nn.Sequential(*layers)`) is one capture
    // read through a source before: it is read through that one, so its
    // parameters are graph inputs the source names.
    if (!source)
      source = sourceOfReadObject(object);
    return makeValue(ValueKind::NNModule, PyRef::borrow(object), source);
  }
  if (PyFunction_Check(object)) {
    llvm::Expected<ValuePtr> function = functionFromReal(object, source);
    // A function written in Python that capture runs itself
    // (collections.namedtuple, NamedTupleFactory.cpp): pinned as any
    // function is, then called by its handler.
    if (function && builtins_.contains(object))
      return makeValue(ValueKind::Builtin, PyRef::borrow(object), source);
    return function;
  }
  if (PyMethod_Check(object)) {
    llvm::Expected<ValuePtr> self = wrapReal(PyMethod_GET_SELF(object), nullptr);
    if (!self)
      return self.takeError();
    llvm::Expected<ValuePtr> function = wrapReal(PyMethod_GET_FUNCTION(object), nullptr);
    if (!function)
      return function.takeError();
    ValuePtr value = makeValue(ValueKind::BoundMethod, PyRef::borrow(object), source);
    value->items = {*self, *function};
    return value;
  }
  if (source && (builtins_.contains(object) || PyCFunction_Check(object))) {
    // A built-in function read through a source: pinned by module and name.
    PyObject* moduleName = Py_IS_TYPE(object, &PyCFunction_Type)
                               ? reinterpret_cast<PyCFunctionObject*>(object)->m_module
                               : nullptr;
    std::optional<std::string> module =
        moduleName && PyUnicode_CheckExact(moduleName) ? python::utf8Of(moduleName) : std::nullopt;
    const char* name = Py_IS_TYPE(object, &PyCFunction_Type)
                           ? reinterpret_cast<PyCFunctionObject*>(object)->m_ml->ml_name
                           : nullptr;
    if (module && name)
      guards_.add(Guard::builtin(source, *module, name));
    else
      guards_.add(typeGuard(source, type));
  }
  if (builtins_.contains(object))
    return makeValue(ValueKind::Builtin, PyRef::borrow(object), source);
  // Torch's C functions, Tensor methods and operator overloads are run by the
  // oracle; which module a C function belongs to says whether it is torch's.
  if (type == types_.opOverload.get() || type == types_.opOverloadPacket.get())
    return makeValue(ValueKind::TorchCallable, PyRef::borrow(object), source);
  if (PyCFunction_Check(object) || Py_IS_TYPE(object, &PyMethodDescr_Type) ||
      Py_IS_TYPE(object, &PyWrapperDescr_Type)) {
    std::string module;
    if (PyCFunction_Check(object)) {
      PyObject* moduleObject = reinterpret_cast<PyCFunctionObject*>(object)->m_module;
      if (moduleObject && PyUnicode_Check(moduleObject))
        module = python::utf8Of(moduleObject).value_or("");
      PyObject* self = PyCFunction_GET_SELF(object);
      if (module.empty() && self && PyModule_Check(self))
        module = PyModule_GetName(self) ? PyModule_GetName(self) : "";
      if (module.empty() && self && PyObject_IsInstance(self, types_.tensor.get()) == 0 &&
          PyType_Check(self))
        module = qualifiedTypeName(self);
      // torch._VF's functions (`_VF.unique_dim`, read by torch.functional)
      // are torch._C._VariableFunctions' static methods: no module, no self.
      if (module.empty() && !self && isVariableFunctionOf(object, types_.variableFunctions.get()))
        module = "torch";
      PyErr_Clear();
    } else {
      PyTypeObject* owner = reinterpret_cast<PyDescrObject*>(object)->d_type;
      if (PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(types_.tensor.get()), owner) &&
          owner != &PyBaseObject_Type)
        module = "torch";
    }
    if (llvm::StringRef(module).starts_with("torch"))
      return makeValue(ValueKind::TorchCallable, PyRef::borrow(object), source);
  }
  // A user object read through a source (a config dataclass, say): what
  // capture reads from it is guarded by value, and its type by a type guard.
  // Modules are left to the guards on what is read from them.
  if (source && !PyModule_Check(object) && !PyType_Check(object) && !PyCallable_Check(object))
    guards_.add(typeGuard(source, type));
  // A class is pinned by name: the global the program constructs, checks
  // with isinstance or catches may be rebound to another class. What
  // capture reads from it (its __init__, a method) is guarded by value.
  if (source && PyType_Check(object))
    guards_.add(classGuard(source, object));
  return makeValue(ValueKind::Object, PyRef::borrow(object), source);
}

void ValueBuilder::guardModuleTableKeys(const ValuePtr& module) {
  if (!module->source)
    return;
  for (const char* table : {"_modules", "_parameters"}) {
    auto [source, entries] = capture::moduleTable(module->source, module->object.get(), table);
    // An empty parameter table is not what a module container iterates.
    if (!source || (PyDict_GET_SIZE(entries) == 0 && llvm::StringRef(table) != "_modules"))
      continue;
    if (std::optional<std::vector<std::string>> keys = capture::strKeys(entries))
      guards_.add(Guard::keysAre(source, *keys));
  }
}

ValuePtr ValueBuilder::knownTensorInput(PyObject* real) const {
  auto it = tensorInputs_.find(real);
  return it == tensorInputs_.end() ? nullptr : it->second.second;
}

PyObject* ValueBuilder::realTensorOf(const ValuePtr& value) const {
  for (const auto& [real, input] : tensorInputs_)
    if (input.second == value)
      return real;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Dictionary reads (DictReads.h).
//===----------------------------------------------------------------------===//

SourcePtr ValueBuilder::instanceDictSource(const SourcePtr& base, PyObject* object, PyObject* name,
                                           PyObject* value) {
  return capture::instanceDictSource(base, object, name, value);
}

SourcePtr ValueBuilder::moduleTableSource(const SourcePtr& base, PyObject* module,
                                          const char* table, PyObject* name, PyObject* value) {
  return capture::moduleTableSource(base, module, table, name, value);
}

SourcePtr ValueBuilder::containerItemSource(const SourcePtr& base, PyObject* container,
                                            PyObject* key, PyObject* item) {
  return capture::containerItemSource(base, container, key, item);
}

//===----------------------------------------------------------------------===//
// Checkpoints.
//===----------------------------------------------------------------------===//

void ValueBuilder::addRoots(std::vector<ValuePtr>& roots) const {
  for (const auto& [object, function] : realFunctions_)
    roots.push_back(function);
  for (const auto& [object, function] : functionsBeingWrapped_)
    roots.push_back(function);
  for (const auto& [object, input] : tensorInputs_)
    roots.push_back(input.second);
  for (const auto& [object, list] : unreadLists_)
    roots.push_back(list);
}

Recorder::Restore ValueBuilder::save() {
  auto tables = [this] {
    return std::tie(realFunctions_, functionsBeingWrapped_, tensorInputs_, inputOrder_,
                    declaredInts_, identities_, identityIndex_, unreadLists_);
  };
  using Tables =
      decltype(std::apply([](auto&... table) { return std::make_tuple(table...); }, tables()));
  auto saved = std::make_shared<Tables>(tables());
  return [tables, saved] { tables() = *saved; };
}

} // namespace dync::capture
