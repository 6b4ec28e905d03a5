//===- ModuleHooks.h - nn.Module forward hooks run as part of the graph ---===//
//
// What nn.Module._call_impl runs around a module's forward when hooks are
// registered, on the module (`register_forward_pre_hook`,
// `register_forward_hook`) or for every module
// (`register_module_forward_pre_hook`, `register_module_forward_hook`):
// capture reads the hook tables through their sources, guards their keys
// and each hook, and inlines the hooks in the order eager runs them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/BuiltinRegistry.h"
#include "frontend/capture/Value.h"

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
/// ValueBuilder::guardNoModuleHooks. Backward hooks, and hooks on a module
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

/// What capture says when \p callee registers a module hook (an
/// nn.Module's `register_forward_hook`, ..., or a global
/// `register_module_forward_hook`) inside the captured function: the hook
/// would change what later module calls run, in this call and after it,
/// which capture does not model yet. Nullopt for any other callee.
std::optional<std::string> hookRegistrationRefusal(const Value& callee);

} // namespace dync::capture
