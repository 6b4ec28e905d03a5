//===- ModuleHooks.h - nn.Module forward hooks run as part of the graph ---===//
//
// What nn.Module._call_impl runs around a module's forward when hooks are
// registered, on the module (`register_forward_pre_hook`,
// `register_forward_hook`) or for every module
// (`register_module_forward_pre_hook`, `register_module_forward_hook`):
// capture reads the hook tables through their sources, guards their keys
// and each hook, and inlines the hooks in the order eager runs them.
//
// Hooks the program registers inside the captured function (Whisper's
// kv-cache hooks) are kept in capture's own table, never in the real one:
// later module calls in the same capture run them, `handle.remove()` takes
// them out, and capture stops if one is still installed when the function
// returns.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/BuiltinRegistry.h"
#include "frontend/capture/Value.h"
#include "ir/Graph.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace dync::capture {

class BuiltinContext;

/// The hooks a call of one module runs, in eager's order: the global
/// tables' entries first, then the module's.
struct ModuleHooks {
  struct Hook {
    ValuePtr function;
    /// Registered with `with_kwargs=True`: called with the keywords too.
    bool withKwargs = false;
  };
  std::vector<Hook> preHooks;
  std::vector<Hook> forwardHooks;
  bool empty() const { return preHooks.empty() && forwardHooks.empty(); }
};

/// Reads the forward hooks of nn.Module \p module and the process's global
/// ones, adding the guards that pin them: `length` on each table that has
/// entries (and on the tables that say which take keywords), and each hook
/// as read through its position, `table[i]`; empty tables are left to
/// ValueBuilder::guardNoModuleHooks. The hooks the program registered on
/// the module while capturing and has not removed follow, where eager's
/// table would hold them (RegisteredHook). Backward hooks, and hooks on a module
/// whose class overrides `__call__` (\p ownCall) or that has no source, stop
/// capture with a message naming the table.
llvm::Expected<ModuleHooks> readModuleHooks(BuiltinContext& interp, const ValuePtr& module,
                                            bool ownCall);

/// Whether \p source reads through a position of a hook table
/// (`..._forward_hooks[0]...`): guards read that, but the rewritten code,
/// whose subscript would read a key, cannot, so no graph input may.
bool readsThroughHookTable(const ir::Source& source);

/// Whether the hook table \p table (an attribute name of nn.Module, or of
/// torch.nn.modules.module when \p global) of \p module has entries: such
/// a table's keys are guarded by readModuleHooks rather than as empty.
bool hookTableHasEntries(PyObject* module, const char* table, bool global);

/// `module(*args, **kwargs)` as _call_impl runs it with \p hooks: each
/// pre-hook may replace the positional arguments (or, with keywords, both),
/// \p forward runs on what they left, and each forward hook may replace the
/// result.
llvm::Expected<ValuePtr> callWithModuleHooks(BuiltinContext& interp, const ModuleHooks& hooks,
                                             const ValuePtr& module, const ValuePtr& forward,
                                             std::vector<ValuePtr> args, KeywordArgs kwargs);

/// A forward hook or pre-hook the program registered on a module while
/// capturing, in capture's table only: the real hook tables stay as they
/// were at the call, so the guards on them are about the call's entry.
struct RegisteredHook {
  /// The real module, kept alive.
  python::PyRef module;
  /// Its source, or its description when it has none, for messages.
  std::string moduleName;
  /// `register_forward_pre_hook` rather than `register_forward_hook`.
  bool pre = false;
  ValuePtr hook;
  /// The RemovableHandle the registration returned: an Instance of torch's
  /// class that exists only in capture. It has no id: eager's ids come from
  /// a process-wide counter, which a graph must not bake in.
  ValuePtr handle;
  bool withKwargs = false;
  bool prepend = false;
  bool alwaysCall = false;
  /// `handle.remove()` ran.
  bool removed = false;
  /// FILE:LINE of the registration.
  std::string where;
  /// A tensor hook (`Tensor.register_hook`, TensorHooks.cpp) rather than a
  /// module's: the tensor, null for module hooks, and the method; `module`
  /// is then null. It is registered on the real tensor after the graph.
  ValuePtr tensor;
  std::string tensorMethod;
  /// The tensor's version counter when the hook was registered: a write in
  /// place after it moves the tensor to a new autograd node, which a
  /// registration after the graph would reach instead of the old one.
  int64_t tensorVersion = 0;
};

/// Whether \p callee is `torch.Tensor.register_hook` or
/// `register_post_accumulate_grad_hook`, which capture runs itself
/// (callTensorHookMethod).
bool isTensorHookMethod(const Value& callee);

/// Runs \p callee, for which isTensorHookMethod holds: eager's checks on
/// the tensor (it must require grad; a post-accumulate hook needs a leaf),
/// then the registration goes into capture's table, to be made on the real
/// tensor after the graph, and a handle is made.
llvm::Expected<ValuePtr> callTensorHookMethod(BuiltinContext& interp, const Value& callee,
                                              std::vector<ValuePtr> args, KeywordArgs kwargs);

/// What the rewritten code needs to register a tensor hook after the graph:
/// the effect, with its function spelled (SideEffect::Function), and the
/// values whose rebuilt forms make its value tuple, the tensor first.
struct TensorHookEffect {
  ir::SideEffect effect;
  std::vector<ValuePtr> values;
};

/// The tensor hooks still installed when the function returns, in the order
/// the program registered them; an error naming the registration whose
/// function the rewritten code cannot make again, or whose tensor the
/// program wrote in place after registering.
llvm::Expected<std::vector<TensorHookEffect>>
tensorHookEffects(BuiltinContext& interp, llvm::ArrayRef<RegisteredHook> hooks);

/// The first of \p hooks registered on the real module \p module and not
/// removed, or null.
const RegisteredHook* installedHookOn(llvm::ArrayRef<RegisteredHook> hooks, PyObject* module);

/// Whether \p name is one of nn.Module's forward hook tables
/// (`_forward_hooks`, `_forward_pre_hooks`, and the tables saying which of
/// their hooks take keywords or are always called), which a registration
/// inside the captured function changes.
bool isForwardHookTable(llvm::StringRef name);

/// Whether \p callee is one of the functions that register or remove
/// module hooks (nn.Module's `register_forward_hook`, ...,
/// `RemovableHandle.remove`, the global `register_module_forward_hook`):
/// capture runs those itself (callHookFunction).
bool isHookFunction(const Value& callee);

/// Runs \p callee, for which isHookFunction holds, on \p args (the module
/// or handle first): a forward hook or pre-hook registered in capture's
/// table with its options, a handle of that table removed. Backward hooks
/// and the global registrations stop capture with the reason, and so does
/// removing a handle made before the call.
llvm::Expected<ValuePtr> callHookFunction(BuiltinContext& interp, const Value& callee,
                                          std::vector<ValuePtr> args, KeywordArgs kwargs);

/// An error naming the first hook the program registered and did not
/// remove, when one is still installed at the function's return (nothing
/// replays a registration on the real module after the graph yet); success
/// otherwise.
llvm::Error checkNoHooksLeftInstalled(llvm::ArrayRef<RegisteredHook> hooks);

/// Whether \p type is torch's RemovableHandle, whose objects capture makes
/// only as handles of registrations it keeps (they are never rebuilt after
/// the graph).
bool isRemovableHandleClass(PyObject* type);

} // namespace dync::capture
