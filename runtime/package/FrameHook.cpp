//===- FrameHook.cpp - The PEP 523 frame hook ------------------------------===//
//
// On a guard hit the rewritten code runs in a new frame that CPython itself
// creates, by calling a function object built from the rewritten code (with
// the original function's globals and closure) with the frame's arguments.
// CPython 3.11 does not export the helpers that allocate and tear down
// interpreter frames on the thread's frame stack (_PyFrame_Clear and
// friends), so building a frame by hand would mean reimplementing them; a
// call keeps every frame CPython's own. At the time the hook sees a frame no
// instruction has run, so its arguments sit unchanged in the first slots of
// localsplus, cells are not yet made (MAKE_CELL runs first) and free
// variables are still in the function's closure (COPY_FREE_VARS runs
// first): passing the arguments again and the same closure reproduces the
// frame exactly for code with the same signature, which load checks.
//
// The original frame is never evaluated on a hit; the caller that pushed it
// clears and pops it when the hook returns, as it does after any evaluation.
//
//===----------------------------------------------------------------------===//

#include "runtime/package/FrameHook.h"

#include "runtime/package/FrameAccess.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <unordered_map>

namespace dync::python {

PyObject* GuardErrorType = nullptr;
PyObject* FallBackType = nullptr;

PyObject* raiseWithAttributes(PyObject* type, const std::string& message,
                              const ExceptionAttribute& first, const ExceptionAttribute& second) {
  PyObject* exc = PyObject_CallFunction(type, "s", message.c_str());
  if (!exc)
    return nullptr;
  PyObject* firstValue = first.convert(first.value);
  PyObject* secondValue = second.convert(second.value);
  if (firstValue && secondValue && PyObject_SetAttrString(exc, first.name, firstValue) == 0 &&
      PyObject_SetAttrString(exc, second.name, secondValue) == 0)
    PyErr_SetObject(type, exc);
  Py_XDECREF(firstValue);
  Py_XDECREF(secondValue);
  Py_DECREF(exc);
  return nullptr;
}

namespace {

// Bindings by the code object they replace. A code with free variables is
// a closure's, which every function made from it shares (a decorator's
// wrapper around each function it decorates): its bindings serve only frames
// of their own function, and several may share the code.
using Registry = std::unordered_map<PyObject*, std::vector<std::shared_ptr<Binding>>>;

bool servesOnlyItsFunction(const Binding& binding) {
  return reinterpret_cast<PyCodeObject*>(binding.originalCode)->co_nfreevars > 0;
}

// The binding that serves a frame of `function` running `bindings`' code.
std::shared_ptr<Binding> bindingFor(const std::vector<std::shared_ptr<Binding>>& bindings,
                                    PyObject* function) {
  for (const std::shared_ptr<Binding>& binding : bindings)
    if (!servesOnlyItsFunction(*binding) || binding->function == function)
      return binding;
  return nullptr;
}

// Allocated once and never destroyed: it holds Python references, and
// static destructors run after the interpreter has finalized.
Registry& registry() {
  static Registry* table = new Registry();
  return *table;
}

// The evaluator the hook replaced, and falls back to. Written only while
// installing, with the GIL held.
_PyFrameEvalFunction previousEval = nullptr;

// Set while a guard runs on this thread. Guards run no Python code by
// contract; if one did anyway, frames it started must not be intercepted.
thread_local bool inGuard = false;

PyObject* evalDefault(PyThreadState* tstate, _PyInterpreterFrame* frame, int throwFlag) {
  return previousEval ? previousEval(tstate, frame, throwFlag)
                      : _PyEval_EvalFrameDefault(tstate, frame, throwFlag);
}

// The message of the dync.FallBack exception being raised, which is
// cleared.
std::string fallBackReason() {
  PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback);
  PyObject* text = value ? PyObject_Str(value) : nullptr;
  const char* utf8 = text ? PyUnicode_AsUTF8(text) : nullptr;
  std::string reason = utf8 && *utf8 ? utf8 : "a bound capture inferred does not hold";
  Py_XDECREF(text);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(traceback);
  PyErr_Clear();
  return reason;
}

void recordMiss(Binding& b, const char* reason) {
  ++b.stats.misses;
  std::string why = reason && *reason ? reason : "guard failed without a reason";
  ++b.stats.missReasons[why];
  b.stats.lastMissReason = std::move(why);
}

// Whether autocast is enabled for any device type. The graphs are captured
// with autocast off, and autocast changes the dtype the ATen calls a graph
// makes compute in (a matmul in bfloat16), which the graph's kernels and
// types do not follow: such a call runs the original code. The query is
// torch's own C function, looked up once; -1 when it cannot be read.
int autocastEnabled() {
  static PyObject* query = [] {
    PyObject* torchC = PyImport_ImportModule("torch._C");
    PyObject* function =
        torchC ? PyObject_GetAttrString(torchC, "_is_any_autocast_enabled") : nullptr;
    Py_XDECREF(torchC);
    PyErr_Clear();
    return function;
  }();
  if (!query)
    return -1;
  PyObject* result = PyObject_CallNoArgs(query);
  if (!result) {
    PyErr_Clear();
    return -1;
  }
  int enabled = result == Py_True;
  Py_DECREF(result);
  return enabled;
}

PyObject* raiseGuardError(const Binding& b, const char* reason) {
  return raiseWithAttributes(GuardErrorType, b.qualifiedName + ": guard failed: " + reason,
                             {"entry", b.qualifiedName.c_str()}, {"reason", reason});
}

// A function running the rewritten code for a call of `original` (another
// function object sharing the entry's code: same code, its own closure).
PyObject* rewrittenFunctionFor(const Binding& b, const Binding::Variant& v, PyObject* original) {
  if (original == b.function) {
    Py_INCREF(v.rewrittenFunction);
    return v.rewrittenFunction;
  }
  PyObject* code = PyFunction_GetCode(v.rewrittenFunction);
  PyObject* fn =
      PyFunction_NewWithQualName(code, PyFunction_GetGlobals(original),
                                 reinterpret_cast<PyFunctionObject*>(original)->func_qualname);
  if (!fn)
    return nullptr;
  PyObject* closure = PyFunction_GetClosure(original);
  if (closure && PyFunction_SetClosure(fn, closure) != 0) {
    Py_DECREF(fn);
    return nullptr;
  }
  return fn;
}

// The argument array of a vectorcall, on the stack when it is short.
class ArgumentArray {
public:
  explicit ArgumentArray(size_t capacity) {
    if (capacity > std::size(local_)) {
      heap_.reserve(capacity);
      data_ = heap_.data();
    }
  }
  void push_back(PyObject* o) {
    if (data_ == local_)
      local_[size_] = o;
    else
      heap_.push_back(o);
    ++size_;
  }
  PyObject** data() { return data_; }
  size_t size() const { return size_; }
  PyObject*& operator[](size_t i) { return data_[i]; }

private:
  PyObject* local_[16];
  std::vector<PyObject*> heap_;
  PyObject** data_ = local_;
  size_t size_ = 0;
};

// What a guard reads as the frame's locals. Until COPY_FREE_VARS runs, a
// free variable's slot is empty and its value sits in the cell of the
// function's closure; the guards read it as `L['name']`, as the rewritten
// code's LOAD_DEREF does (a decorator's wrapper reads the function it wraps
// from a cell that can be rebound after load). For code with free variables
// the slots are copied, the free ones filled with what their cells hold
// (borrowed: the frame's function keeps its closure alive); other frames'
// localsplus is passed as it is.
class GuardLocals {
public:
  explicit GuardLocals(const dync_frame_view& view) : slots_(view.localsplus) {
    PyCodeObject* co = view.code;
    int free = co->co_nfreevars;
    PyObject* closure = view.function ? PyFunction_GET_CLOSURE(view.function) : nullptr;
    if (free == 0 || !closure || !PyTuple_Check(closure) || PyTuple_GET_SIZE(closure) != free)
      return;
    auto total = static_cast<size_t>(co->co_nlocalsplus);
    PyObject** copy = local_;
    if (total > std::size(local_)) {
      heap_.resize(total);
      copy = heap_.data();
    }
    std::copy(view.localsplus, view.localsplus + total, copy);
    for (int i = 0; i < free; ++i)
      copy[total - static_cast<size_t>(free - i)] = PyCell_GET(PyTuple_GET_ITEM(closure, i));
    slots_ = copy;
  }
  GuardLocals(const GuardLocals&) = delete;
  GuardLocals& operator=(const GuardLocals&) = delete;
  PyObject* const* slots() const { return slots_; }

private:
  PyObject* const* slots_;
  PyObject* local_[32];
  std::vector<PyObject*> heap_;
};

// Calls the rewritten code with the arguments bound in `view`'s frame:
// positional parameters and *args positionally, keyword-only parameters and
// **kwargs by name. Every parameter is passed, so defaults play no part.
PyObject* callRewritten(const Binding& b, const Binding::Variant& v, const dync_frame_view& view) {
  PyCodeObject* co = view.code;
  int argc = co->co_argcount;
  int kwonly = co->co_kwonlyargcount;
  bool hasVarargs = co->co_flags & CO_VARARGS;
  bool hasVarkw = co->co_flags & CO_VARKEYWORDS;
  PyObject* const* slots = view.localsplus;
  PyObject* varargs = hasVarargs ? slots[argc + kwonly] : nullptr;
  PyObject* varkw = hasVarkw ? slots[argc + kwonly + (hasVarargs ? 1 : 0)] : nullptr;
  if ((hasVarargs && (!varargs || !PyTuple_Check(varargs))) ||
      (hasVarkw && (!varkw || !PyDict_Check(varkw)))) {
    PyErr_SetString(PyExc_SystemError, "dync: a frame's *args or **kwargs slot is not bound");
    return nullptr;
  }

  Py_ssize_t numVarargs = varargs ? PyTuple_GET_SIZE(varargs) : 0;
  Py_ssize_t numVarkw = varkw ? PyDict_GET_SIZE(varkw) : 0;
  Py_ssize_t numPositional = argc + numVarargs;
  // On the stack for the usual few arguments; this runs on every hit.
  ArgumentArray args(static_cast<size_t>(numPositional + kwonly + numVarkw) + 1);
  // Slot 0 is left free for PY_VECTORCALL_ARGUMENTS_OFFSET.
  args.push_back(nullptr);
  for (int i = 0; i < argc; ++i)
    args.push_back(slots[i]);
  for (Py_ssize_t i = 0; i < numVarargs; ++i)
    args.push_back(PyTuple_GET_ITEM(varargs, i));

  PyObject* kwnames = nullptr;
  if (kwonly + numVarkw > 0) {
    kwnames = PyTuple_New(kwonly + numVarkw);
    if (!kwnames)
      return nullptr;
    for (int i = 0; i < kwonly; ++i) {
      PyObject* name = PyTuple_GET_ITEM(co->co_localsplusnames, argc + i);
      Py_INCREF(name);
      PyTuple_SET_ITEM(kwnames, i, name);
      args.push_back(slots[argc + i]);
    }
    Py_ssize_t pos = 0, k = kwonly;
    PyObject *key, *value;
    while (varkw && PyDict_Next(varkw, &pos, &key, &value)) {
      Py_INCREF(key);
      PyTuple_SET_ITEM(kwnames, k++, key);
      args.push_back(value);
    }
  }
  for (size_t i = 1; i < args.size(); ++i)
    if (!args[i]) {
      Py_XDECREF(kwnames);
      PyErr_SetString(PyExc_SystemError, "dync: a frame's argument slot is not bound");
      return nullptr;
    }

  PyObject* fn = rewrittenFunctionFor(b, v, view.function);
  PyObject* result = nullptr;
  if (fn) {
    result = PyObject_Vectorcall(
        fn, args.data() + 1, static_cast<size_t>(numPositional) | PY_VECTORCALL_ARGUMENTS_OFFSET,
        kwnames);
    Py_DECREF(fn);
  }
  Py_XDECREF(kwnames);
  return result;
}

PyObject* dyncEvalFrame(PyThreadState* tstate, _PyInterpreterFrame* frame, int throwFlag) {
  // A non-zero throwFlag means a generator is being thrown into: a resumed
  // frame, never one to replace.
  if (throwFlag || inGuard)
    return evalDefault(tstate, frame, throwFlag);
  dync_frame_view view;
  dync_frame_view_of(frame, &view);
  if (!view.fresh)
    return evalDefault(tstate, frame, throwFlag);
  Registry& table = registry();
  auto it = table.find(reinterpret_cast<PyObject*>(view.code));
  if (it == table.end())
    return evalDefault(tstate, frame, throwFlag);

  // Holds the binding alive across the rewritten call, during which another
  // thread may unload the artifact.
  std::shared_ptr<Binding> binding = bindingFor(it->second, view.function);
  if (!binding)
    return evalDefault(tstate, frame, throwFlag);
  Binding& b = *binding;
  ++b.stats.calls;
  if (!b.staleReason.empty() || view.globals != b.globals) {
    // Changed code is never served (docs/runtime.md, "Code identity"); the
    // graphs are bound in the module the entry was loaded for.
    const char* reason =
        !b.staleReason.empty()
            ? b.staleReason.c_str()
            : "the function's globals are not those of the module the artifact was loaded for";
    recordMiss(b, reason);
    if (b.strict)
      return raiseGuardError(b, reason);
    return evalDefault(tstate, frame, throwFlag);
  }
  if (int autocast = autocastEnabled(); autocast != 0) {
    const char* reason = autocast > 0 ? "autocast is enabled; the graphs were captured without it"
                                      : "autocast state cannot be read (torch._C."
                                        "_is_any_autocast_enabled); assuming it is enabled";
    recordMiss(b, reason);
    if (b.strict)
      return raiseGuardError(b, reason);
    return evalDefault(tstate, frame, throwFlag);
  }
  // The first failing guard of each variant. A variant for the other grad
  // mode fails on its first guard, `grad_mode ...` (guard codegen checks it
  // first); that says nothing about the call, so it is reported only when
  // every variant failed that way.
  const char* reason = nullptr;
  const char* gradModeReason = nullptr;
  GuardLocals locals(view);
  for (const Binding::Variant& v : b.variants) {
    const char* why = nullptr;
    inGuard = true;
    int hit = v.entry->guard(locals.slots(), view.globals, &why);
    inGuard = false;
    if (PyErr_Occurred()) {
      // Contract violation by the artifact; never let it leak into the
      // caller's frame.
      PyErr_Clear();
      hit = 0;
      why = "the guard function raised a Python exception";
    }
    if (hit == 1) {
      ++b.stats.hits;
      PyObject* result = callRewritten(b, v, view);
      if (result || !FallBackType || !PyErr_ExceptionMatches(FallBackType))
        return result;
      // The graph stopped before doing anything observable: eager returns
      // there, so the original code runs, and the call counts as a miss.
      std::string why = fallBackReason();
      --b.stats.hits;
      recordMiss(b, why.c_str());
      if (b.strict)
        return raiseGuardError(b, b.stats.lastMissReason.c_str());
      return evalDefault(tstate, frame, throwFlag);
    }
    bool gradMode = why && std::strncmp(why, "grad_mode ", 10) == 0;
    if (gradMode && !gradModeReason)
      gradModeReason = why;
    else if (!gradMode && !reason)
      reason = why;
  }
  recordMiss(b, reason ? reason : gradModeReason);
  if (b.strict)
    return raiseGuardError(b, b.stats.lastMissReason.c_str());
  return evalDefault(tstate, frame, throwFlag);
}

} // namespace

Binding::~Binding() {
  for (auto& [name, graph] : boundGlobals) {
    Py_DECREF(name);
    Py_DECREF(graph);
  }
  Py_XDECREF(originalCode);
  Py_XDECREF(function);
  for (Variant& v : variants)
    Py_XDECREF(v.rewrittenFunction);
  Py_XDECREF(globals);
}

bool hookInstalled() {
  return _PyInterpreterState_GetEvalFrameFunc(PyInterpreterState_Get()) == dyncEvalFrame;
}

bool registerBinding(std::shared_ptr<Binding> binding, const char*& kind, std::string& error) {
  Registry& table = registry();
  auto existing = table.find(binding->originalCode);
  if (existing != table.end())
    for (const std::shared_ptr<Binding>& other : existing->second)
      if (!servesOnlyItsFunction(*binding) || other->function == binding->function) {
        kind = "entry-in-use";
        error = binding->qualifiedName + " is already served by " + other->artifactPath +
                "; unload that artifact first";
        return false;
      }
  PyInterpreterState* interp = PyInterpreterState_Get();
  _PyFrameEvalFunction current = _PyInterpreterState_GetEvalFrameFunc(interp);
  if (current != dyncEvalFrame) {
    if (current != _PyEval_EvalFrameDefault) {
      // Chaining under an evaluator that is active now would leave it
      // unable to restore itself; TorchDynamo, for one, saves and restores
      // the evaluator it found when a compiled region begins and ends.
      kind = "frame-hook-busy";
      error = "another PEP 523 frame evaluator is active (is this running inside a "
              "torch.compile'd region?); load dync artifacts outside of it";
      return false;
    }
    previousEval = current;
    _PyInterpreterState_SetEvalFrameFunc(interp, dyncEvalFrame);
  }
  PyObject* code = binding->originalCode;
  table[code].push_back(std::move(binding));
  return true;
}

void unregisterBinding(const Binding& binding) {
  Registry& table = registry();
  auto it = table.find(binding.originalCode);
  if (it == table.end())
    return;
  std::vector<std::shared_ptr<Binding>>& bindings = it->second;
  auto found = std::find_if(bindings.begin(), bindings.end(),
                            [&](const auto& b) { return b.get() == &binding; });
  if (found == bindings.end())
    return;
  // Erasing may drop the last reference; keep it past the erase so the
  // destructor does not run while the table is being modified.
  std::shared_ptr<Binding> keep = std::move(*found);
  bindings.erase(found);
  if (bindings.empty())
    table.erase(it);
  if (table.empty()) {
    PyInterpreterState* interp = PyInterpreterState_Get();
    // If another evaluator was installed on top of the hook it chains to
    // the hook, so the hook stays, passing every frame through, until that
    // evaluator restores it.
    if (_PyInterpreterState_GetEvalFrameFunc(interp) == dyncEvalFrame)
      _PyInterpreterState_SetEvalFrameFunc(interp,
                                           previousEval ? previousEval : _PyEval_EvalFrameDefault);
  }
}

std::vector<std::shared_ptr<Binding>> registeredBindings() {
  std::vector<std::shared_ptr<Binding>> all;
  for (auto& [code, bindings] : registry())
    all.insert(all.end(), bindings.begin(), bindings.end());
  return all;
}

} // namespace dync::python
