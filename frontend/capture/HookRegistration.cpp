//===- HookRegistration.cpp - Module hooks registered while capturing -----===//
//
// `module.register_forward_hook(hook)` and `register_forward_pre_hook`
// inside the captured function (OpenAI Whisper's decoding loop installs its
// kv-cache hooks on its first step and removes them when it ends), and
// `handle.remove()` on the handle they return.
//
// Capture never touches the real hook tables. A registration goes into
// capture's own table (BuiltinContext::registeredHooks), with the hook and
// its options; readModuleHooks puts the hooks still installed where eager's
// table holds them, so later calls of the module in the same capture run
// them inlined; remove() marks the registration removed. The guards on the
// real tables stay about the call's entry, as every guard does.
//
// The handle is an object of torch's RemovableHandle class that exists only
// in capture, with no attributes: eager numbers handles from a process-wide
// counter (`RemovableHandle.next_id`), which a graph must not bake in, and
// nothing the program does with a handle but remove it (or use it as a
// context manager, whose __exit__ removes it) reads the number. A handle
// cannot leave the function (returned, or stored on an object of the
// caller's), and a hook still installed when the function returns stops
// capture: no registration is replayed on the real module after the graph
// yet (docs/capture.md, "Not yet").
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/ArgumentBinding.h"
#include "frontend/capture/BuiltinContext.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/ModuleHooks.h"
#include "frontend/capture/PythonHelpers.h"

#include "llvm/ADT/Twine.h"

#include <iterator>

namespace dync::capture {

using python::PyRef;

namespace {

enum class HookFunctionKind { ForwardHook, ForwardPreHook, Remove, Backward, Global };

struct HookFunction {
  const char* owner;
  const char* name;
  const char* spelling;
  HookFunctionKind kind;
};

constexpr HookFunction kHookFunctions[] = {
    {"torch.nn.Module", "register_forward_hook", "nn.Module.register_forward_hook",
     HookFunctionKind::ForwardHook},
    {"torch.nn.Module", "register_forward_pre_hook", "nn.Module.register_forward_pre_hook",
     HookFunctionKind::ForwardPreHook},
    {"torch.utils.hooks.RemovableHandle", "remove", "RemovableHandle.remove",
     HookFunctionKind::Remove},
    {"torch.nn.Module", "register_full_backward_hook", "nn.Module.register_full_backward_hook",
     HookFunctionKind::Backward},
    {"torch.nn.Module", "register_full_backward_pre_hook",
     "nn.Module.register_full_backward_pre_hook", HookFunctionKind::Backward},
    {"torch.nn.Module", "register_backward_hook", "nn.Module.register_backward_hook",
     HookFunctionKind::Backward},
    {"torch.nn.modules.module", "register_module_full_backward_hook",
     "torch.nn.modules.module.register_module_full_backward_hook", HookFunctionKind::Backward},
    {"torch.nn.modules.module", "register_module_full_backward_pre_hook",
     "torch.nn.modules.module.register_module_full_backward_pre_hook", HookFunctionKind::Backward},
    {"torch.nn.modules.module", "register_module_forward_hook",
     "torch.nn.modules.module.register_module_forward_hook", HookFunctionKind::Global},
    {"torch.nn.modules.module", "register_module_forward_pre_hook",
     "torch.nn.modules.module.register_module_forward_pre_hook", HookFunctionKind::Global}};

/// The entry of kHookFunctions whose function is \p function, or null. The
/// functions are looked up once; torch keeps them alive.
const HookFunction* hookFunctionOf(PyObject* function) {
  static PyObject* functions[std::size(kHookFunctions)] = {};
  static bool looked = false;
  if (!looked) {
    looked = true;
    for (size_t i = 0; i < std::size(kHookFunctions); ++i) {
      llvm::Expected<PyRef> owner = importObject(kHookFunctions[i].owner);
      if (!owner) {
        llvm::consumeError(owner.takeError());
        continue;
      }
      functions[i] = PyObject_GetAttrString(owner->get(), kHookFunctions[i].name);
      PyErr_Clear();
    }
  }
  for (size_t i = 0; i < std::size(kHookFunctions); ++i)
    if (function && functions[i] == function)
      return &kHookFunctions[i];
  return nullptr;
}

/// torch.utils.hooks.RemovableHandle (borrowed; torch keeps it alive), or
/// null when this torch has none.
PyObject* removableHandleClass() {
  static PyRef type = [] {
    llvm::Expected<PyRef> found = importObject("torch.utils.hooks.RemovableHandle");
    if (!found) {
      llvm::consumeError(found.takeError());
      return PyRef();
    }
    return *found;
  }();
  return type.get();
}

/// An option of a registration (`prepend=True`): false when not given.
llvm::Expected<bool> option(BuiltinContext& interp, const ValuePtr& value) {
  if (!value)
    return false;
  return interp.truth(value);
}

/// `module.register_forward_hook(hook, *, prepend, with_kwargs,
/// always_call)` or `register_forward_pre_hook(hook, *, prepend,
/// with_kwargs)`: the hook goes into capture's table, and the handle is
/// made.
llvm::Expected<ValuePtr> registerHook(BuiltinContext& interp, const HookFunction& function,
                                      std::vector<ValuePtr> args, KeywordArgs kwargs) {
  bool pre = function.kind == HookFunctionKind::ForwardPreHook;
  std::vector<const char*> names = {"self", "hook", "prepend", "with_kwargs"};
  if (!pre)
    names.push_back("always_call");
  llvm::Expected<std::vector<ValuePtr>> bound =
      bindArguments(function.spelling, names, 2, std::move(args), std::move(kwargs), nullptr, 2);
  if (!bound)
    return bound.takeError();
  const ValuePtr& module = (*bound)[0];
  if (module->kind != ValueKind::NNModule)
    return captureError(llvm::Twine(function.spelling) + " on a " + spelling(module->kind) +
                        " value, not an nn.Module capture reads, is not supported");
  PyObject* handleClass = removableHandleClass();
  if (!handleClass)
    return captureError(llvm::Twine(function.spelling) +
                        ": this torch has no torch.utils.hooks.RemovableHandle");
  RegisteredHook registered;
  registered.module = module->object;
  registered.moduleName =
      module->source ? module->source->str() : describeObject(module->object.get());
  registered.pre = pre;
  registered.hook = (*bound)[1];
  // The options' positions among `names`; a forward pre-hook has no
  // always_call.
  const std::pair<bool*, size_t> options[] = {
      {&registered.prepend, 2}, {&registered.withKwargs, 3}, {&registered.alwaysCall, 4}};
  for (const auto& [flag, index] : options) {
    if (index >= bound->size())
      continue;
    llvm::Expected<bool> set = option(interp, (*bound)[index]);
    if (!set)
      return set.takeError();
    *flag = *set;
  }
  registered.handle = makeValue(ValueKind::Instance, PyRef::borrow(handleClass));
  registered.where = interp.programLine();
  ValuePtr handle = registered.handle;
  interp.registeredHooks().push_back(std::move(registered));
  return handle;
}

/// `handle.remove()`: the registration it was made by is marked removed
/// (again, harmlessly, as eager's second remove() does nothing).
llvm::Expected<ValuePtr> removeHook(BuiltinContext& interp, std::vector<ValuePtr> args,
                                    KeywordArgs kwargs) {
  if (args.size() != 1 || !kwargs.empty())
    return captureError("RemovableHandle.remove() takes no arguments");
  for (RegisteredHook& registered : interp.registeredHooks())
    if (registered.handle == args[0]) {
      registered.removed = true;
      return makeNone();
    }
  std::string handle = args[0]->source ? args[0]->source->str() : "a handle";
  return captureError(
      "RemovableHandle.remove() on " + handle +
      " that was not made by a registration inside the captured function (a hook registered "
      "before the call) is not supported yet: the hook is in the module's real table, which "
      "capture reads guarded as it was at the call; remove the hook before calling the "
      "function");
}

} // namespace

bool isHookFunction(const Value& callee) {
  return callee.object && hookFunctionOf(callee.object.get());
}

llvm::Expected<ValuePtr> callHookFunction(BuiltinContext& interp, const Value& callee,
                                          std::vector<ValuePtr> args, KeywordArgs kwargs) {
  const HookFunction* function = hookFunctionOf(callee.object.get());
  if (!function)
    return captureError("calling " + describeObject(callee.object.get()) +
                        " as a module hook function");
  switch (function->kind) {
  case HookFunctionKind::ForwardHook:
  case HookFunctionKind::ForwardPreHook:
    return registerHook(interp, *function, std::move(args), std::move(kwargs));
  case HookFunctionKind::Remove:
    return removeHook(interp, std::move(args), std::move(kwargs));
  case HookFunctionKind::Backward:
    return captureError(llvm::Twine(function->spelling) +
                        " inside the captured function is not supported: a backward hook runs "
                        "in backward, through autograd functions wrapping the module's inputs "
                        "and outputs, which a graph does not hold; register backward hooks "
                        "before calling the function");
  case HookFunctionKind::Global:
    return captureError(llvm::Twine(function->spelling) +
                        " inside the captured function is not supported yet: a global hook "
                        "changes what every later module call runs, in this call and after "
                        "it; register global hooks before calling the function");
  }
  llvm_unreachable("every kind of hook function is handled above");
}

llvm::Error checkNoHooksLeftInstalled(llvm::ArrayRef<RegisteredHook> hooks) {
  for (const RegisteredHook& registered : hooks) {
    // Tensor hooks are registered after the graph (TensorHooks.cpp).
    if (registered.removed || registered.tensor)
      continue;
    return captureError(
        llvm::Twine("a forward ") + (registered.pre ? "pre-hook" : "hook") + " registered at " +
        registered.where + " (" +
        (registered.pre ? "register_forward_pre_hook" : "register_forward_hook") + " on " +
        registered.moduleName +
        ") is still installed when the function returns, which is not supported yet: capture "
        "keeps hooks registered inside the captured function in its own table, and the "
        "rewritten code does not register them on the real module after the graph; remove "
        "the hook (handle.remove()) before returning, or register it before calling the "
        "function");
  }
  return llvm::Error::success();
}

bool isRemovableHandleClass(PyObject* type) { return type && type == removableHandleClass(); }

} // namespace dync::capture
