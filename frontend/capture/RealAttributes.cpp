//===- RealAttributes.cpp - Attributes of real objects set while capturing ===//
//
// Programs keep state on objects that outlive the call: a module records a
// size it chose (`self.shift_size = 0`), counts its calls, caches a tensor;
// a library sets a flag before the call and clears it after. Setting the
// real attribute while capturing would change the process, and the value may
// exist only in capture (a fake tensor, a symbolic size). So capture keeps
// its own settings, as it does for ContextVars: an assignment is recorded,
// reads of that attribute see it, and the real object is not touched. The
// value the program leaves there is assigned to the real object after the
// graph by the rewritten code (SideEffects.cpp, docs/capture.md "Side
// effects"). What the attribute held before is not read: only a read the
// program makes before its first assignment is guarded, so the guards check
// the value at entry, never one the program assigned.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Interpreter.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/embedding/PyStrings.h"

#include <string>
#include <vector>

namespace dync::capture {

using python::PyRef;

namespace {

/// Why a class descriptor of \p name would turn an assignment into
/// something else, or an empty string.
std::string whyDescriptor(PyTypeObject* type, PyObject* key) {
  PyObject* classAttr = _PyType_Lookup(type, key);
  if (classAttr && Py_TYPE(classAttr)->tp_descr_set)
    return "its class has a descriptor of that name";
  return "";
}

/// Why assigning \p name of \p object cannot be kept in capture's state, or
/// an empty string: only a plain instance-dict assignment can, one that no
/// __setattr__ or descriptor of the class turns into something else.
std::string whyNotPlain(PyObject* object, llvm::StringRef name) {
  PyTypeObject* type = Py_TYPE(object);
  if (PyModule_Check(object) || PyType_Check(object))
    return "assigning module and class attributes is not replayed";
  if (type->tp_setattro != PyObject_GenericSetAttr)
    return "its class defines __setattr__";
  if (type->tp_dictoffset == 0)
    return "its class has no instance dict";
  PyRef key = PyRef::steal(python::newStr(name));
  return whyDescriptor(type, key.get());
}

/// Whether assigning \p value puts back \p entry, the very parameter or
/// buffer the module holds under that name (spectral norm's `self._u =
/// F.normalize(..., out=self._u)`): nn.Module.__setattr__ then files the
/// same object under the same name, which changes nothing. The value is
/// that tensor when it is the fake capture made for it, as `is` decides; a
/// parameter or buffer is never reassigned while capturing (that is
/// refused), so the table still holds it.
bool assignsOwnEntry(const ValueBuilder& values, PyObject* entry, const ValuePtr& value) {
  if (!value->isTensor() || !value->object)
    return false;
  ValuePtr input = values.tensorInputOf(entry);
  return input && input->object.get() == value->object.get();
}

/// Whether assigning \p value puts back \p entry, the very submodule the
/// module holds under that name (a router's `self.classifier =
/// self.classifier.to(self.dtype)`, where `to` returns the module itself
/// when nothing changes): nn.Module.__setattr__ then files the same object
/// under the same name. A submodule is never reassigned while capturing
/// (that is refused), so the table still holds it.
bool assignsOwnSubmodule(PyObject* entry, const ValuePtr& value) {
  return value->kind == ValueKind::NNModule && value->object && value->object.get() == entry;
}

/// The same for an nn.Module, whose __setattr__ files parameters, buffers
/// and submodules in tables of their own: a value that is none of those,
/// assigned to a name none of the tables holds, is a plain instance-dict
/// assignment, which nn.Module.__setattr__ also makes when it is replayed.
/// Sets \p unchanged when the assignment puts back the module's own entry.
std::string whyNotPlainModuleAttr(const TorchTypes& types, const ValueBuilder& values,
                                  const ValuePtr& base, llvm::StringRef name, const ValuePtr& value,
                                  bool asModuleSetattr, bool& unchanged) {
  PyObject* object = base->object.get();
  PyTypeObject* type = Py_TYPE(object);
  PyRef key = PyRef::steal(python::newStr(name));
  PyRef moduleSetattr = PyRef::steal(PyObject_GetAttrString(types.module.get(), "__setattr__"));
  PyErr_Clear();
  PyObject* ownSetattr = _PyType_Lookup(type, PyRef::steal(python::newStr("__setattr__")).get());
  if (!moduleSetattr || (ownSetattr != moduleSetattr.get() && !asModuleSetattr))
    return "its class defines __setattr__";
  if (std::string why = whyDescriptor(type, key.get()); !why.empty())
    return why;
  PyObject** dictPointer = _PyObject_GetDictPtr(object);
  PyObject* dict = dictPointer ? *dictPointer : nullptr;
  for (const char* table : {"_parameters", "_buffers", "_modules"}) {
    PyObject* entries = dict ? PyDict_GetItemString(dict, table) : nullptr;
    if (!entries || !PyDict_Check(entries))
      continue;
    // The table as the program left it (ChangedState.cpp): a parameter it
    // removed (`del module._parameters[name]`) may be set as a plain
    // attribute, as eager's assignment then does.
    llvm::Expected<std::optional<ValuePtr>> changed = values.changedEntry(entries, key.get());
    if (!changed) {
      llvm::consumeError(changed.takeError());
      return std::string("its ") + table + " could not be read";
    }
    if (*changed) {
      if (**changed)
        return std::string("it is in the module's ") + table + ", which assignment would change";
      continue;
    }
    PyObject* entry = PyDict_GetItem(entries, key.get());
    if (entry) {
      bool own = std::string_view(table) == "_modules" ? assignsOwnSubmodule(entry, value)
                                                       : assignsOwnEntry(values, entry, value);
      if (own) {
        unchanged = true;
        return "";
      }
      return std::string("it is in the module's ") + table + ", which assignment would change";
    }
  }
  if (value->kind == ValueKind::NNModule)
    return "the value is a module, which assignment registers as a submodule";
  if (value->isTensor() && value->source && value->object &&
      PyObject_IsInstance(value->object.get(), types.parameter.get()) == 1)
    return "the value is a parameter, which assignment registers";
  PyErr_Clear();
  return "";
}

/// The module class's own __setattr__ when it is a Python function other
/// than nn.Module's (nn.RNNBase keeps its flat weight list in step), else
/// null.
PyObject* ownModuleSetattr(const TorchTypes& types, PyObject* object) {
  PyObject* own =
      _PyType_Lookup(Py_TYPE(object), PyRef::steal(python::newStr("__setattr__")).get());
  PyRef moduleSetattr = PyRef::steal(PyObject_GetAttrString(types.module.get(), "__setattr__"));
  PyErr_Clear();
  if (!own || !moduleSetattr || own == moduleSetattr.get() || !PyFunction_Check(own))
    return nullptr;
  return own;
}

/// The assignment whose module class's own __setattr__ is being followed:
/// the object, the name and the value assigned, and whether nn.Module's
/// __setattr__ was reached with that very value (capture is single
/// threaded; a nested assignment stacks its own).
struct FollowedSetattr {
  PyObject* object;
  std::string name;
  const Value* value;
  bool reached = false;
};
std::vector<FollowedSetattr> followedSetattrs;

} // namespace

llvm::Error Interpreter::setRealAttr(const ValuePtr& base, llvm::StringRef name, ValuePtr value) {
  return setRealAttrAs(base, name, std::move(value), /*asModuleSetattr=*/false);
}

llvm::Expected<std::optional<ValuePtr>>
Interpreter::callRealModuleSetattr(const ValuePtr& callee, const std::vector<ValuePtr>& args,
                                   const KeywordArgs& kwargs) {
  PyObject* function = callee->object.get();
  if (!function || args.size() != 3 || !kwargs.empty() || args[0]->kind != ValueKind::NNModule ||
      !args[0]->object || isFreshModule(args[0]->object.get()))
    return std::nullopt;
  auto* moduleClass = reinterpret_cast<PyTypeObject*>(types_.module.get());
  if (function != PyDict_GetItemString(moduleClass->tp_dict, "__setattr__"))
    return std::nullopt;
  if (!args[1]->isConstant() || !PyUnicode_Check(args[1]->object.get()))
    return captureError("nn.Module.__setattr__ with a name that is not a constant string");
  std::string name = python::utf8Of(args[1]->object.get()).value_or("");
  for (FollowedSetattr& followed : followedSetattrs)
    if (followed.object == args[0]->object.get() && followed.name == name &&
        followed.value == args[2].get())
      followed.reached = true;
  if (llvm::Error error = setRealAttrAs(args[0], name, args[2], /*asModuleSetattr=*/true))
    return error;
  return std::optional<ValuePtr>(makeNone());
}

llvm::Error Interpreter::setRealAttrAs(const ValuePtr& base, llvm::StringRef name, ValuePtr value,
                                       bool asModuleSetattr) {
  PyObject* object = base->object.get();
  std::string target = base->source ? base->source->str() : "a " + spelling(base->kind).str();
  auto refuse = [&](const llvm::Twine& why) {
    return captureError("assigning attribute '" + name + "' of " + target + " (" + why +
                        "; a side effect outside the graph)");
  };
  // A module made while capturing is capture's own (FreshModules.cpp).
  if (object && base->kind == ValueKind::NNModule && isFreshModule(object))
    return setFreshModuleAttr(base, name, std::move(value));
  if (!object || !base->source)
    return refuse("an object the rewritten code cannot find after the graph");
  // A module class's own __setattr__ decides what assignment does: it runs
  // as the program's code does, and its `super().__setattr__(name, value)`
  // comes back as nn.Module's (callRealModuleSetattr). The function is
  // pinned by a guard on the class attribute. After the graph the
  // assignment is replayed with STORE_ATTR, which runs that __setattr__
  // again: so it must have passed the very value on and done nothing else
  // capture keeps (nn.RNNBase's, a check that raises on a bad value), or
  // the replay would convert the value twice or repeat its other effects.
  if (base->kind == ValueKind::NNModule && !asModuleSetattr) {
    if (PyObject* own = ownModuleSetattr(types_, object)) {
      llvm::Expected<ValuePtr> function =
          values_.functionFromReal(own, values_.classReadSource(base->source, "__setattr__", own));
      if (!function)
        return function.takeError();
      bool known = llvm::any_of(realAttrSettings_, [&](const RealAttrSetting& setting) {
        return setting.object.get() == object && setting.name == name;
      });
      size_t effects = sideEffectCount_;
      followedSetattrs.push_back({object, name.str(), value.get()});
      llvm::Expected<ValuePtr> result =
          call(*function, {base, makeConstantSteal(python::newStr(name)), value});
      bool reached = followedSetattrs.back().reached;
      followedSetattrs.pop_back();
      if (!result)
        return result.takeError();
      if (!reached || sideEffectCount_ != effects + (known ? 0 : 1))
        return refuse("its class's own __setattr__ does more than hand the value to "
                      "nn.Module.__setattr__ (it changes the value or keeps other state), which "
                      "the assignment after the graph would do again");
      return llvm::Error::success();
    }
  }
  if (base->kind == ValueKind::NNModule) {
    llvm::Expected<bool> buffer = assignBuffer(base, name, value, asModuleSetattr);
    if (!buffer)
      return buffer.takeError();
    if (*buffer)
      return llvm::Error::success();
  }
  bool unchanged = false;
  std::string why =
      base->kind == ValueKind::NNModule
          ? whyNotPlainModuleAttr(types_, values_, base, name, value, asModuleSetattr, unchanged)
          : whyNotPlain(object, name);
  if (!why.empty())
    return refuse(why);
  if (unchanged)
    return llvm::Error::success();
  std::string where = programLine();
  for (RealAttrSetting& setting : realAttrSettings_)
    if (setting.object.get() == object && setting.name == name) {
      setting.value = std::move(value);
      setting.where = std::move(where);
      return llvm::Error::success();
    }
  realAttrSettings_.push_back({PyRef::borrow(object), name.str(), target, std::move(where),
                               Source::attr(base->source, name), std::move(value),
                               sideEffectCount_++});
  return llvm::Error::success();
}

llvm::Expected<bool> Interpreter::assignBuffer(const ValuePtr& base, llvm::StringRef name,
                                               const ValuePtr& value, bool asModuleSetattr) {
  // nn.Module.__setattr__ files a tensor (or None) assigned to a buffer's
  // name through register_buffer: `_buffers[name] = value`, after torch's
  // global buffer registration hooks, keeping the buffer's persistence.
  // A parameter or module value takes other branches first, and a class
  // with its own __setattr__ or a descriptor of that name decides for
  // itself: those are left to the generic path.
  PyObject* object = base->object.get();
  bool none = value->isConstant() && value->object.get() == Py_None;
  if (!none && !value->isTensor())
    return false;
  if (value->isTensor() && value->object &&
      PyObject_IsInstance(value->object.get(), types_.parameter.get()) == 1)
    return false;
  PyErr_Clear();
  PyTypeObject* type = Py_TYPE(object);
  PyRef key = PyRef::steal(python::newStr(name));
  PyRef moduleSetattr = PyRef::steal(PyObject_GetAttrString(types_.module.get(), "__setattr__"));
  PyErr_Clear();
  PyObject* ownSetattr = _PyType_Lookup(type, PyRef::steal(python::newStr("__setattr__")).get());
  if (!moduleSetattr || (ownSetattr != moduleSetattr.get() && !asModuleSetattr) ||
      !whyDescriptor(type, key.get()).empty())
    return false;
  PyObject** dictPointer = _PyObject_GetDictPtr(object);
  PyObject* buffers =
      dictPointer && *dictPointer ? PyDict_GetItemString(*dictPointer, "_buffers") : nullptr;
  if (!buffers || !PyDict_CheckExact(buffers))
    return false;
  // A buffer as the program left the table (it may have assigned or
  // removed it already).
  llvm::Expected<std::optional<ValuePtr>> changed = values_.changedEntry(buffers, key.get());
  if (!changed)
    return changed.takeError();
  bool isBuffer =
      *changed ? static_cast<bool>(**changed) : PyDict_Contains(buffers, key.get()) == 1;
  if (!isBuffer)
    return false;
  // The value the program assigned back (`self.b = self.b`) changes nothing.
  if (!*changed && assignsOwnEntry(values_, PyDict_GetItem(buffers, key.get()), value))
    return true;

  std::string target = base->source->str();
  auto refuse = [&](const llvm::Twine& why) {
    return captureError("assigning buffer '" + name + "' of " + target + " (" + why +
                        "; a side effect outside the graph)");
  };
  // What nn.Module.__setattr__ calls: register_buffer, nn.Module's own,
  // pinned by a guard on the class attribute.
  PyRef moduleRegister =
      PyRef::steal(PyObject_GetAttrString(types_.module.get(), "register_buffer"));
  PyErr_Clear();
  PyObject* ownRegister =
      _PyType_Lookup(type, PyRef::steal(python::newStr("register_buffer")).get());
  if (!moduleRegister || ownRegister != moduleRegister.get())
    return refuse("its class defines register_buffer, which assignment calls");
  if (PyObject** ownDict = _PyObject_GetDictPtr(object);
      ownDict && *ownDict && PyDict_GetItemString(*ownDict, "register_buffer"))
    return refuse("the instance holds its own register_buffer, which assignment calls");
  llvm::Expected<ValuePtr> pinned = values_.functionFromReal(
      ownRegister, values_.classReadSource(base->source, "register_buffer", ownRegister));
  if (!pinned)
    return pinned.takeError();
  llvm::Expected<PyRef> hooks =
      importObject("torch.nn.modules.module._global_buffer_registration_hooks");
  if (!hooks)
    return hooks.takeError();
  Py_ssize_t hookCount = PyObject_Length(hooks->get());
  if (hookCount != 0) {
    PyErr_Clear();
    return refuse("torch's global buffer registration hooks, which registering a buffer runs, "
                  "hold functions of the program's");
  }
  guards_.add(Guard::empty(Source::attr(Source::module("torch.nn.modules.module"),
                                        "_global_buffer_registration_hooks")));

  // The table itself, changed as the program's `module._buffers[name] =
  // value` would change it.
  llvm::Expected<ValuePtr> table = semantics_.getAttr(base, "_buffers");
  if (!table)
    return table.takeError();
  if ((*table)->kind != ValueKind::Dict)
    return refuse("its _buffers is no dict capture can change");
  if (llvm::Error error = noteContainerMutation(*table, "assigning buffer '" + name + "'"))
    return error;
  for (auto& [entryKey, entryValue] : (*table)->entries)
    if (entryKey->isConstant() && entryKey->object && PyUnicode_Check(entryKey->object.get()) &&
        PyUnicode_Compare(entryKey->object.get(), key.get()) == 0) {
      entryValue = value;
      return true;
    }
  (*table)->entries.emplace_back(makeConstant(key), value);
  return true;
}

ValuePtr Interpreter::assignedRealAttr(PyObject* object, llvm::StringRef name) const {
  // A module's attributes are its globals, which its functions assign.
  if (PyModule_Check(object) && !globalStores_.empty()) {
    PyRef key = PyRef::steal(python::newStr(name));
    return storedGlobal(PyModule_GetDict(object), key.get());
  }
  for (const RealAttrSetting& setting : realAttrSettings_)
    if (setting.object.get() == object && setting.name == name)
      return setting.value;
  return nullptr;
}

} // namespace dync::capture
