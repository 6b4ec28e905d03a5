//===- TensorHooks.cpp - Tensor hooks registered while capturing ----------===//
//
// `t.register_hook(fn)` on a tensor the function computes (gradient
// reversal, MuZero's gradient scaling of its hidden state) and
// `register_post_accumulate_grad_hook` on a leaf. A hook runs only in
// backward, which the caller starts after the function returned, so
// registering it on the real tensor after the graph ran is what
// registering it in forward is. In a graph that records autograd the
// tensor the graph hands back has eager's autograd node, and the hook goes
// there.
//
// The registration goes into capture's hook table (RegisteredHook, shared
// with module hooks, so checkpoints, branches and `handle.remove()` treat
// both alike); when the function returns, each one still installed becomes
// an `after register_hook` side effect (docs/capture.md, "Side effects"):
// the tensor is one more result of the graph, and the rewritten code makes
// the function again and calls the method on the tensor
// (docs/rewrite.md). The function is either one read through a source
// (`self.scale_grad`, a module's function), loaded from it, or one the
// program made with `lambda` or `def`, made again from its code object
// (over its module's globals) with its defaults and its closure cells'
// final contents; a cell holding the module (`self`) holds the real module, so a
// hook reading `self.alpha` reads it in backward, as eager's does.
//
// Eager's checks are made on the fake tensor: a tensor that does not
// require grad raises in eager (a variant captured with grad mode off);
// that error stops capture with eager's message and what to do instead.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/ArgumentBinding.h"
#include "frontend/capture/BuiltinContext.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/ModuleHooks.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/embedding/PyStrings.h"

#include "llvm/ADT/Twine.h"

namespace dync::capture {

using python::PyRef;

namespace {

constexpr const char* kTensorHookMethods[] = {"register_hook",
                                              "register_post_accumulate_grad_hook"};

/// The name of the tensor hook method \p function is, or null.
const char* tensorHookMethodOf(PyObject* function) {
  static PyObject* methods[std::size(kTensorHookMethods)] = {}; // alive as long as torch
  static bool looked = false;
  if (!looked) {
    looked = true;
    llvm::Expected<PyRef> tensor = importObject("torch.Tensor");
    if (!tensor) {
      llvm::consumeError(tensor.takeError());
      return nullptr;
    }
    for (size_t i = 0; i < std::size(kTensorHookMethods); ++i) {
      methods[i] = PyObject_GetAttrString(tensor->get(), kTensorHookMethods[i]);
      PyErr_Clear();
    }
  }
  for (size_t i = 0; i < std::size(kTensorHookMethods); ++i)
    if (function && methods[i] == function)
      return kTensorHookMethods[i];
  return nullptr;
}

/// An attribute of the fake tensor \p tensor as a long (a bool too).
llvm::Expected<long long> tensorNumber(PyObject* tensor, const char* name) {
  PyRef value = PyRef::steal(PyObject_GetAttrString(tensor, name));
  if (!value)
    return pythonError(llvm::Twine("reading a tensor's ") + name);
  long long number = PyLong_AsLongLong(value.get());
  if (number == -1 && PyErr_Occurred())
    return pythonError(llvm::Twine("reading a tensor's ") + name);
  return number;
}

/// What the program registers, for messages: `the lambda at model.py:12`.
std::string describeFunction(const ValuePtr& function) {
  if (function->source)
    return function->source->str();
  if (function->kind == ValueKind::Function && function->code)
    return "function " + function->qualname;
  if (function->object)
    return describeObject(function->object.get());
  return "a " + spelling(function->kind).str() + " value";
}

/// The module name of the globals \p globals, or empty.
std::string moduleNameOf(PyObject* globals) {
  PyObject* name = globals ? PyDict_GetItemString(globals, "__name__") : nullptr;
  return name && PyUnicode_Check(name) ? python::utf8Of(name).value_or("") : "";
}

/// Whether \p code assigns or deletes one of its free variables (a
/// `nonlocal` the hook changes): the cell is then state that functions made
/// in the same frame share, which a new cell per function would split.
bool writesFreeVariable(PyCodeObject* code) {
  PyRef bytes = PyRef::steal(PyCode_GetCode(code));
  if (!bytes || !PyBytes_Check(bytes.get())) {
    PyErr_Clear();
    return true;
  }
  // CPython 3.11's opcodes.
  static const int storeDeref = 138, deleteDeref = 139, extendedArg = 144;
  Py_ssize_t freeStart = PyTuple_GET_SIZE(code->co_localsplusnames) - code->co_nfreevars;
  const auto* raw = reinterpret_cast<const unsigned char*>(PyBytes_AS_STRING(bytes.get()));
  Py_ssize_t size = PyBytes_GET_SIZE(bytes.get());
  int extended = 0;
  for (Py_ssize_t i = 0; i + 1 < size; i += 2) {
    int opcode = raw[i], arg = raw[i + 1] | extended;
    extended = opcode == extendedArg ? arg << 8 : 0;
    if ((opcode == storeDeref || opcode == deleteDeref) && arg >= freeStart)
      return true;
  }
  return false;
}

/// The effect for \p hook's function, and the values after the tensor its
/// value tuple holds.
llvm::Error describeHookFunction(const RegisteredHook& hook, ir::SideEffect::Function& spelled,
                                 std::vector<ValuePtr>& values) {
  const ValuePtr& function = hook.hook;
  std::string method = "Tensor." + hook.tensorMethod;
  std::string what = method + " at " + hook.where + " registers " + describeFunction(function);
  if (function->source) {
    spelled.source = function->source->str();
    return llvm::Error::success();
  }
  // A method of an object read through a source (`self.scale_grad`): read
  // again by its name.
  if (function->kind == ValueKind::BoundMethod && function->items.size() == 2 &&
      function->items[0]->source && function->items[1]->kind == ValueKind::Function &&
      !function->items[1]->qualname.empty()) {
    llvm::StringRef name = llvm::StringRef(function->items[1]->qualname).rsplit('.').second;
    if (name.empty())
      name = function->items[1]->qualname;
    spelled.source = ir::Source::attr(function->items[0]->source, name)->str();
    return llvm::Error::success();
  }
  if (function->kind != ValueKind::Function || function->object || !function->code)
    return captureError(
        what + ", which the rewritten code cannot make again after the graph yet: it registers a "
               "function read through a source (an attribute of the module, a global) or one the "
               "program defines with `lambda` or `def`; wrap the call in a lambda");
  // A function another module defines is made over that module's globals,
  // which the rewritten code imports by the module's name.
  if (!function->entryGlobals) {
    std::string name = moduleNameOf(function->globals.get());
    PyRef module = name.empty() ? PyRef() : PyRef::steal(PyImport_ImportModule(name.c_str()));
    PyErr_Clear();
    if (!module || !PyModule_Check(module.get()) ||
        PyModule_GetDict(module.get()) != function->globals.get())
      return captureError(what + ", whose globals are no imported module's, which the "
                                 "rewritten code cannot make it again over; define the hook in "
                                 "a module");
    spelled.imported = true;
  }
  auto* code = reinterpret_cast<PyCodeObject*>(function->code.get());
  if (!function->entries.empty())
    return captureError(what + ", which has keyword-only defaults, not supported yet in a hook "
                               "registered after the graph; bind them in a closure instead");
  if (writesFreeVariable(code))
    return captureError(
        what + ", which assigns a free variable (`nonlocal`), not supported yet in a hook "
               "registered after the graph: the rewritten code gives each function new closure "
               "cells, which functions sharing the program's cell would not share; keep the "
               "state on an object instead");
  spelled.module = moduleNameOf(function->globals.get());
  spelled.qualname = python::utf8Of(code->co_qualname).value_or("");
  spelled.line = code->co_firstlineno;
  if (spelled.module.empty() || spelled.qualname.empty())
    return captureError(what + ", whose module or qualified name is unknown");
  for (const ValuePtr& value : function->items)
    values.push_back(value);
  spelled.defaults = function->items.size();
  if (static_cast<int>(function->closure.size()) != code->co_nfreevars)
    return captureError(what + ", whose closure does not match its code's free variables");
  PyObject* names = code->co_localsplusnames;
  Py_ssize_t freeStart = PyTuple_GET_SIZE(names) - code->co_nfreevars;
  for (size_t i = 0; i < function->closure.size(); ++i) {
    const ValuePtr& cell = function->closure[i];
    std::string name =
        python::utf8Of(PyTuple_GET_ITEM(names, freeStart + static_cast<Py_ssize_t>(i)))
            .value_or("?");
    if (cell->kind != ValueKind::Cell || (cell->object && PyCell_Check(cell->object.get())))
      return captureError(
          what + ", whose free variable '" + name +
          "' is a closure cell that exists before the call, which the rewritten code cannot "
          "hand the function yet; read the value through the module or a global instead");
    if (!cell->cell)
      return captureError(what + ", whose free variable '" + name +
                          "' is unbound when the function returns");
    const ValuePtr& contents = cell->cell;
    // What has a source and is neither a tensor nor a number is read
    // through it: the module itself, not a copy, so the hook reads its
    // attributes when backward runs.
    if (contents->source && !contents->isTensor() && contents->kind != ValueKind::SymNum &&
        !contents->isConstant()) {
      spelled.cells.emplace_back(name, contents->source->str());
      continue;
    }
    spelled.cells.emplace_back(name, "");
    values.push_back(contents);
  }
  return llvm::Error::success();
}

} // namespace

bool isTensorHookMethod(const Value& callee) {
  return callee.object && tensorHookMethodOf(callee.object.get());
}

llvm::Expected<ValuePtr> callTensorHookMethod(BuiltinContext& interp, const Value& callee,
                                              std::vector<ValuePtr> args, KeywordArgs kwargs) {
  const char* method = tensorHookMethodOf(callee.object.get());
  if (!method)
    return captureError("calling " + describeObject(callee.object.get()) +
                        " as a tensor hook method");
  std::string spelled = std::string("Tensor.") + method;
  llvm::Expected<std::vector<ValuePtr>> bound =
      bindArguments(spelled, {"self", "hook"}, 2, std::move(args), std::move(kwargs), nullptr, 2);
  if (!bound)
    return bound.takeError();
  const ValuePtr& tensor = (*bound)[0];
  if (!tensor->isTensor())
    return captureError(spelled + " on a " + spelling(tensor->kind) +
                        " value, not a tensor capture computes, is not supported");
  llvm::Expected<long long> requiresGrad = tensorNumber(tensor->object.get(), "requires_grad");
  if (!requiresGrad)
    return requiresGrad.takeError();
  if (!*requiresGrad)
    return captureError(
        spelled +
        " on a tensor that does not require grad: eager raises RuntimeError (\"cannot "
        "register a hook on a tensor that doesn't require gradient\") here, and a "
        "compiled call cannot raise it; register the hook only when the tensor "
        "requires grad (`if t.requires_grad: t." +
        method + "(...)`), as eager code that also runs under torch.no_grad() does");
  if (llvm::StringRef(method) == "register_post_accumulate_grad_hook") {
    llvm::Expected<long long> leaf = tensorNumber(tensor->object.get(), "is_leaf");
    if (!leaf)
      return leaf.takeError();
    if (!*leaf)
      return captureError(spelled + " on a tensor that is not a leaf: eager raises "
                                    "RuntimeError (\"post accumulate grad hooks cannot be "
                                    "registered on non-leaf tensors\") here");
  }
  llvm::Expected<long long> version = tensorNumber(tensor->object.get(), "_version");
  if (!version)
    return version.takeError();
  PyObject* handleClass = nullptr;
  {
    llvm::Expected<PyRef> found = importObject("torch.utils.hooks.RemovableHandle");
    if (!found)
      return found.takeError();
    handleClass = found->get(); // torch keeps the class alive
  }
  RegisteredHook registered;
  registered.moduleName = "a tensor";
  registered.hook = (*bound)[1];
  registered.handle = makeValue(ValueKind::Instance, PyRef::borrow(handleClass));
  registered.where = interp.programLine();
  registered.tensor = tensor;
  registered.tensorMethod = method;
  registered.tensorVersion = *version;
  ValuePtr handle = registered.handle;
  interp.registeredHooks().push_back(std::move(registered));
  return handle;
}

llvm::Expected<std::vector<TensorHookEffect>>
tensorHookEffects(BuiltinContext& interp, llvm::ArrayRef<RegisteredHook> hooks) {
  (void)interp;
  std::vector<TensorHookEffect> effects;
  for (const RegisteredHook& hook : hooks) {
    if (!hook.tensor || hook.removed)
      continue;
    llvm::Expected<long long> version = tensorNumber(hook.tensor->object.get(), "_version");
    if (!version)
      return version.takeError();
    if (*version != hook.tensorVersion)
      return captureError(
          "Tensor." + hook.tensorMethod + " at " + hook.where +
          " registers a hook on a tensor the function then writes in place, which is not "
          "supported yet: eager's hook stays on the tensor's autograd node from before the "
          "write, and a registration after the graph would reach the node after it; register "
          "the hook after the write, or write into a clone()");
    TensorHookEffect effect;
    effect.effect.kind = ir::SideEffect::Kind::Hook;
    effect.effect.hookMethod = hook.tensorMethod;
    effect.values.push_back(hook.tensor);
    if (llvm::Error error = describeHookFunction(hook, effect.effect.hookFunction, effect.values))
      return error;
    effects.push_back(std::move(effect));
  }
  return effects;
}

} // namespace dync::capture
