//===- ModuleHooks.cpp - nn.Module forward hooks run as part of the graph -===//
//
// nn.Module._call_impl, as it runs under torch.compile (no try/except
// around the hooks):
//
//   for id, hook in (*_global_forward_pre_hooks.items(),
//                    *self._forward_pre_hooks.items()):
//     if id in self._forward_pre_hooks_with_kwargs:
//       r = hook(self, args, kwargs)   # None, or (args, kwargs)
//     else:
//       r = hook(self, args)           # None, a tuple, or one argument
//   result = self.forward(*args, **kwargs)
//   for id, hook in (*_global_forward_hooks.items(),
//                    *self._forward_hooks.items()):
//     if id in self._forward_hooks_with_kwargs or id in
//         _global_forward_hooks_with_kwargs:
//       r = hook(self, args, kwargs, result)
//     else:
//       r = hook(self, args, result)
//     if r is not None: result = r
//
// Hooks registered with `always_call=True` run there too; eager runs them a
// second way only when forward raises, which a graph that ran does not.
//
// Each table's length is guarded and each hook read through its position
// (`list(L['self']._forward_hooks.values())[0]`): the keys are handle ids
// from a process-wide counter, so the same program numbers its hooks
// differently in another process. Whether a hook takes keywords is guarded
// the same way, by the key at its position: `has_key
// L['self']._forward_hooks_with_kwargs : list(L['self']._forward_hooks)[0]`
// (or `lacks_key`).
//
// Hooks registered inside the captured function are not in the real
// tables, which stay as they were at the call: capture's own table holds
// them (HookRegistration.cpp), and they join the real tables' hooks here,
// last or (`prepend=True`) first among the module's own.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/ModuleHooks.h"
#include "frontend/capture/BuiltinContext.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/embedding/PyStrings.h"

#include "llvm/ADT/Twine.h"

#include <algorithm>

namespace dync::capture {

using ir::Guard;
using python::PyRef;

namespace {

constexpr const char* kTorchModule = "torch.nn.modules.module";

/// The hook table \p name of \p module's instance dict (borrowed), or null.
PyObject* moduleTable(PyObject* module, const char* name) {
  PyObject** dictPointer = _PyObject_GetDictPtr(module);
  PyObject* dict = dictPointer ? *dictPointer : nullptr;
  return dict ? PyDict_GetItemString(dict, name) : nullptr;
}

/// The global table \p name of torch.nn.modules.module (new reference), or
/// null when this torch has none.
PyRef globalTable(const char* name) {
  llvm::Expected<PyRef> table = importObject(std::string(kTorchModule) + "." + name);
  if (!table) {
    llvm::consumeError(table.takeError());
    return PyRef();
  }
  return *table;
}

Py_ssize_t entriesOf(PyObject* table) {
  if (!table || !PyDict_Check(table))
    return 0;
  return PyDict_GET_SIZE(table);
}

/// One hook table as read: where it is, and its entries in its own order.
struct TableRead {
  SourcePtr source;
  std::vector<std::pair<long long, PyRef>> entries;
};

/// Reads \p table's entries in iteration order (an OrderedDict's own, which
/// `prepend=True` and `move_to_end` change) and guards its length; each
/// hook is then read through its position, `table[i]`. The keys are handle
/// ids, numbered by a process-wide counter, so the same program registers
/// the same hooks under other ids in another process (or when the model is
/// built again): the guards name positions, never ids. An empty table is
/// guarded elsewhere.
llvm::Expected<TableRead> readTable(BuiltinContext& interp, PyObject* table, SourcePtr source) {
  TableRead read;
  read.source = source;
  if (entriesOf(table) == 0)
    return read;
  if (!PyDict_CheckExact(table) && !PyODict_CheckExact(table))
    return captureError(source->str() + " is a " +
                        qualifiedTypeName(reinterpret_cast<PyObject*>(Py_TYPE(table))) +
                        ", not a dict or OrderedDict; hook tables of that kind are not supported");
  PyRef items = PyRef::steal(PyObject_CallMethod(table, "items", nullptr));
  PyRef list = items ? PyRef::steal(PySequence_List(items.get())) : PyRef();
  if (!list)
    return pythonError("reading the entries of " + source->str());
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list.get()); ++i) {
    PyObject* pair = PyList_GET_ITEM(list.get(), i);
    PyObject* key = PyTuple_GET_ITEM(pair, 0);
    int overflow = 0;
    long long id = PyLong_CheckExact(key) ? PyLong_AsLongLongAndOverflow(key, &overflow) : 0;
    if (!PyLong_CheckExact(key) || overflow)
      return captureError(source->str() + " has the key " + describeObject(key) +
                          ", not a handle id; hook tables keyed otherwise are not supported");
    read.entries.emplace_back(id, PyRef::borrow(PyTuple_GET_ITEM(pair, 1)));
  }
  interp.guards().add(Guard::lengthIs(source, static_cast<int64_t>(read.entries.size())));
  return read;
}

/// Guards the length of the table saying which hooks take keywords (or
/// that it is empty, or that the module has none), and reads it. Which of
/// the hooks it names is guarded hook by hook (takesKeywords).
PyRef guardKwargsTable(BuiltinContext& interp, PyObject* table, const SourcePtr& source) {
  if (!table) {
    if (source->kind() == Source::Kind::Attr && source->base()->kind() != Source::Kind::Module)
      interp.guards().add(Guard::absent(source));
    return PyRef();
  }
  if (entriesOf(table) == 0)
    interp.guards().add(Guard::empty(source));
  else if (PyDict_CheckExact(table) || PyODict_CheckExact(table))
    interp.guards().add(Guard::lengthIs(source, entriesOf(table)));
  else
    interp.guards().add(typeGuard(source, reinterpret_cast<PyObject*>(Py_TYPE(table))));
  return PyRef::borrow(table);
}

bool inTable(PyObject* table, long long id) {
  if (!table || !PyDict_Check(table))
    return false;
  PyRef key = PyRef::steal(PyLong_FromLongLong(id));
  int found = key ? PyDict_Contains(table, key.get()) : -1;
  if (found < 0)
    PyErr_Clear();
  return found == 1;
}

/// One table saying which hooks take keywords, as read: where it is and
/// the table (null when the module has none).
struct KwargsTable {
  SourcePtr source;
  PyRef table;
};

/// Whether the hook with handle \p id, the key at \p keySource, is in one
/// of \p tables; each non-empty table's answer is guarded by that key
/// (`has_key` or `lacks_key`), so a hook registered again with or without
/// `with_kwargs` at the same position misses. Empty and absent tables are
/// guarded as such (guardKwargsTable).
bool takesKeywords(BuiltinContext& interp, llvm::ArrayRef<KwargsTable> tables, long long id,
                   const SourcePtr& keySource) {
  bool takes = false;
  for (const KwargsTable& kwargs : tables) {
    if (entriesOf(kwargs.table.get()) == 0)
      continue;
    bool in = inTable(kwargs.table.get(), id);
    interp.guards().add(Guard::keyMembership(kwargs.source, keySource, in));
    takes = takes || in;
  }
  return takes;
}

/// A hook read through \p source (`table[i]`), pinned: a function by its
/// code, a bound method by its function and object (`.__func__`,
/// `.__self__`), a callable object by its class and the class's __call__.
llvm::Expected<ValuePtr> wrapHook(BuiltinContext& interp, PyObject* hook, const SourcePtr& source) {
  ValueBuilder& values = interp.values();
  if (PyMethod_Check(hook)) {
    interp.guards().add(typeGuard(source, reinterpret_cast<PyObject*>(&PyMethod_Type)));
    llvm::Expected<ValuePtr> self =
        values.wrapReal(PyMethod_GET_SELF(hook), Source::attr(source, "__self__"));
    if (!self)
      return self.takeError();
    llvm::Expected<ValuePtr> function =
        values.wrapReal(PyMethod_GET_FUNCTION(hook), Source::attr(source, "__func__"));
    if (!function)
      return function.takeError();
    ValuePtr method = makeValue(ValueKind::BoundMethod, PyRef::borrow(hook), source);
    method->items = {*self, *function};
    return method;
  }
  llvm::Expected<ValuePtr> value = values.wrapReal(hook, source);
  if (!value || PyFunction_Check(hook) || (*value)->kind != ValueKind::Object)
    return value;
  PyTypeObject* type = Py_TYPE(hook);
  interp.guards().add(typeGuard(source, reinterpret_cast<PyObject*>(type)));
  PyRef callName = PyRef::steal(python::newStr("__call__"));
  PyObject* dunderCall = _PyType_Lookup(type, callName.get());
  if (dunderCall && PyFunction_Check(dunderCall)) {
    llvm::Expected<ValuePtr> pinned =
        values.functionFromReal(dunderCall, Source::classAttr(source, "__call__"));
    if (!pinned)
      return pinned.takeError();
  }
  return value;
}

/// The hooks the program registered on \p object while capturing and has
/// not removed, in registration order, put where eager's table holds them:
/// after the global tables' hooks (\p globalPre and \p globalForward of
/// them), first among the module's own when registered with
/// `prepend=True`, else last.
void addRegisteredHooks(BuiltinContext& interp, PyObject* object, ModuleHooks& hooks,
                        size_t globalPre, size_t globalForward) {
  for (const RegisteredHook& registered : interp.registeredHooks()) {
    if (registered.removed || registered.module.get() != object)
      continue;
    std::vector<ModuleHooks::Hook>& list = registered.pre ? hooks.preHooks : hooks.forwardHooks;
    size_t front = std::min(list.size(), registered.pre ? globalPre : globalForward);
    ModuleHooks::Hook hook{registered.hook, registered.withKwargs};
    if (registered.prepend)
      list.insert(list.begin() + static_cast<std::ptrdiff_t>(front), std::move(hook));
    else
      list.push_back(std::move(hook));
  }
}

} // namespace

const RegisteredHook* installedHookOn(llvm::ArrayRef<RegisteredHook> hooks, PyObject* module) {
  for (const RegisteredHook& registered : hooks)
    if (!registered.removed && registered.module.get() == module)
      return &registered;
  return nullptr;
}

bool isForwardHookTable(llvm::StringRef name) {
  return name.starts_with("_forward_hooks") || name.starts_with("_forward_pre_hooks");
}

bool readsThroughHookTable(const Source& source) {
  for (const Source* step = &source; step && step->base(); step = step->base().get()) {
    const Source& base = *step->base();
    if ((step->kind() == Source::Kind::ValueAt || step->kind() == Source::Kind::KeyAt) &&
        base.kind() == Source::Kind::Attr && llvm::StringRef(base.name()).ends_with("_hooks"))
      return true;
  }
  return false;
}

bool hookTableHasEntries(PyObject* module, const char* table, bool global) {
  if (global)
    return entriesOf(globalTable(table).get()) > 0;
  return entriesOf(moduleTable(module, table)) > 0;
}

llvm::Expected<ModuleHooks> readModuleHooks(BuiltinContext& interp, const ValuePtr& module,
                                            bool ownCall) {
  PyObject* object = module->object.get();
  std::string name = module->source ? module->source->str() : describeObject(object);
  // Backward hooks wrap the forward's inputs and outputs in autograd
  // functions whose backward runs them: nothing a graph holds.
  for (const char* table : {"_backward_hooks", "_backward_pre_hooks"})
    if (hookTableHasEntries(object, table, /*global=*/false))
      return captureError("module " + name + " has " + llvm::StringRef(table).drop_front() +
                          " registered; backward hooks are not supported (they run in "
                          "backward, through autograd functions wrapping the module's inputs "
                          "and outputs)");
  for (const char* table : {"_global_backward_hooks", "_global_backward_pre_hooks"})
    if (hookTableHasEntries(object, table, /*global=*/true))
      return captureError(std::string("global module hooks (") + table +
                          ") are registered; backward hooks are not supported (they run in "
                          "backward, through autograd functions wrapping the module's inputs "
                          "and outputs)");

  ModuleHooks hooks;
  bool anyPre = hookTableHasEntries(object, "_forward_pre_hooks", false) ||
                hookTableHasEntries(object, "_global_forward_pre_hooks", true);
  bool anyForward = hookTableHasEntries(object, "_forward_hooks", false) ||
                    hookTableHasEntries(object, "_global_forward_hooks", true);
  // Hooks the program registered while capturing (HookRegistration.cpp).
  const RegisteredHook* installed = installedHookOn(interp.registeredHooks(), object);
  bool registered = installed != nullptr;
  bool registeredPre = installed && installed->pre;
  if (!anyPre && !anyForward && !registered)
    return hooks;
  const char* which =
      anyPre || (!anyForward && registeredPre) ? "forward_pre_hooks" : "forward_hooks";
  if (ownCall)
    return captureError("module " + name + " has " + which + " registered and its class " +
                        qualifiedTypeName(reinterpret_cast<PyObject*>(Py_TYPE(object))) +
                        " overrides __call__; hooks on such a module are not supported");
  if (!anyPre && !anyForward) {
    addRegisteredHooks(interp, object, hooks, 0, 0);
    return hooks;
  }
  if (!module->source)
    return captureError("module " + name + " has " + which +
                        " registered but was not read through a source, so the hook table "
                        "cannot be guarded; hooks on such a module are not supported");

  SourcePtr torchModule = Source::module(kTorchModule);
  // Each hook is read through its position, and so is its key, which the
  // keyword tables are asked about.
  auto hooksOf = [&](llvm::ArrayRef<std::pair<PyObject*, SourcePtr>> tables,
                     llvm::ArrayRef<KwargsTable> kwargsTables)
      -> llvm::Expected<std::vector<ModuleHooks::Hook>> {
    std::vector<ModuleHooks::Hook> found;
    for (const auto& [table, source] : tables) {
      llvm::Expected<TableRead> read = readTable(interp, table, source);
      if (!read)
        return read.takeError();
      for (size_t position = 0; position < read->entries.size(); ++position) {
        const auto& [id, hook] = read->entries[position];
        auto at = static_cast<int64_t>(position);
        llvm::Expected<ValuePtr> function =
            wrapHook(interp, hook.get(), Source::valueAt(read->source, at));
        if (!function)
          return function.takeError();
        found.push_back(
            {*function, takesKeywords(interp, kwargsTables, id, Source::keyAt(read->source, at))});
      }
    }
    return found;
  };
  auto kwargsTable = [&](PyObject* table, SourcePtr source) {
    return KwargsTable{source, guardKwargsTable(interp, table, source)};
  };

  size_t globalPre = 0, globalForward = 0;
  if (anyPre) {
    PyRef global = globalTable("_global_forward_pre_hooks");
    globalPre = static_cast<size_t>(entriesOf(global.get()));
    KwargsTable kwargs =
        kwargsTable(moduleTable(object, "_forward_pre_hooks_with_kwargs"),
                    Source::attr(module->source, "_forward_pre_hooks_with_kwargs"));
    llvm::Expected<std::vector<ModuleHooks::Hook>> pre =
        hooksOf({{global.get(), Source::attr(torchModule, "_global_forward_pre_hooks")},
                 {moduleTable(object, "_forward_pre_hooks"),
                  Source::attr(module->source, "_forward_pre_hooks")}},
                {kwargs});
    if (!pre)
      return pre.takeError();
    hooks.preHooks = std::move(*pre);
  }
  if (anyForward) {
    PyRef global = globalTable("_global_forward_hooks");
    globalForward = static_cast<size_t>(entriesOf(global.get()));
    KwargsTable moduleKwargs =
        kwargsTable(moduleTable(object, "_forward_hooks_with_kwargs"),
                    Source::attr(module->source, "_forward_hooks_with_kwargs"));
    PyRef globalKwargsObject = globalTable("_global_forward_hooks_with_kwargs");
    KwargsTable globalKwargs = kwargsTable(
        globalKwargsObject.get(), Source::attr(torchModule, "_global_forward_hooks_with_kwargs"));
    llvm::Expected<std::vector<ModuleHooks::Hook>> forward = hooksOf(
        {{global.get(), Source::attr(torchModule, "_global_forward_hooks")},
         {moduleTable(object, "_forward_hooks"), Source::attr(module->source, "_forward_hooks")}},
        {moduleKwargs, globalKwargs});
    if (!forward)
      return forward.takeError();
    hooks.forwardHooks = std::move(*forward);
  }
  addRegisteredHooks(interp, object, hooks, globalPre, globalForward);
  return hooks;
}

llvm::Expected<ValuePtr> callWithModuleHooks(BuiltinContext& interp, const ModuleHooks& hooks,
                                             const ValuePtr& module, const ValuePtr& forward,
                                             std::vector<ValuePtr> args, KeywordArgs kwargs) {
  ValuePtr positional = makeTuple(std::move(args));
  ValuePtr keywords = makeValue(ValueKind::Dict);
  for (auto& [name, value] : kwargs)
    keywords->entries.emplace_back(makeConstantSteal(python::newStr(name)), std::move(value));

  for (const ModuleHooks::Hook& hook : hooks.preHooks) {
    std::vector<ValuePtr> hookArgs = {module, positional};
    if (hook.withKwargs)
      hookArgs.push_back(keywords);
    llvm::Expected<ValuePtr> result = interp.call(hook.function, std::move(hookArgs));
    if (!result)
      return result.takeError();
    ValuePtr replaced = *result;
    if (replaced->isNone())
      continue;
    if (!hook.withKwargs) {
      // One value that is not a tuple is the one positional argument.
      positional = replaced->kind == ValueKind::Tuple ? replaced : makeTuple({replaced});
      continue;
    }
    if (replaced->kind != ValueKind::Tuple || replaced->items.size() != 2)
      return captureError("forward pre-hook must return None or a tuple of (new_args, "
                          "new_kwargs), but got a " +
                          spelling(replaced->kind) + " value");
    positional = replaced->items[0];
    keywords = replaced->items[1];
  }

  // forward(*args, **kwargs), as CALL_FUNCTION_EX spreads them.
  llvm::Expected<std::vector<ValuePtr>> spread = interp.unpack(positional);
  if (!spread)
    return spread.takeError();
  if (keywords->kind != ValueKind::Dict)
    return captureError("a forward pre-hook gave keyword arguments that are a " +
                        spelling(keywords->kind) + " value, not a dict");
  KeywordArgs spreadKeywords;
  for (const auto& [key, value] : keywords->entries) {
    if (!key->isConstant() || !PyUnicode_Check(key->object.get()))
      return captureError("a forward pre-hook gave keyword arguments whose keys are not strings");
    spreadKeywords.emplace_back(python::utf8Of(key->object.get()).value_or("?"), value);
  }
  llvm::Expected<ValuePtr> result = interp.call(forward, std::move(*spread), spreadKeywords);
  if (!result)
    return result.takeError();
  ValuePtr output = *result;

  for (const ModuleHooks::Hook& hook : hooks.forwardHooks) {
    std::vector<ValuePtr> hookArgs = {module, positional};
    if (hook.withKwargs)
      hookArgs.push_back(keywords);
    hookArgs.push_back(output);
    llvm::Expected<ValuePtr> replaced = interp.call(hook.function, std::move(hookArgs));
    if (!replaced)
      return replaced.takeError();
    if (!(*replaced)->isNone())
      output = *replaced;
  }
  return output;
}

} // namespace dync::capture
