//===- ChangedState.cpp - Reads of real state the program changed ---------===//
//
// Capture never changes the caller's objects while capturing: a program's
// changes are kept in capture's own tables (SideEffects.cpp,
// RealAttributes.cpp) and replayed after the graph. Every read capture
// makes of a real object the program may have changed therefore asks here
// first, or it would see the object as it was at the call: a module's
// `_parameters` after `module._parameters[name] = tensor` (what
// torch.func.functional_call does before running the module), an object's
// `__dict__` after `obj.name = value`, a module's globals after `global n;
// n = ...` in one of its functions.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/capture/ValueBuilder.h"
#include "frontend/embedding/PyStrings.h"

namespace dync::capture {

using python::PyRef;

namespace {

/// Whether \p entryKey, a key of a Dict value, is the constant \p key.
llvm::Expected<bool> isKey(const ValuePtr& entryKey, PyObject* key) {
  if (!entryKey->isConstant() || !entryKey->object)
    return false;
  if (entryKey->object.get() == key)
    return true;
  if (Py_TYPE(entryKey->object.get()) != Py_TYPE(key))
    return false;
  int equal = PyObject_RichCompareBool(entryKey->object.get(), key, Py_EQ);
  if (equal < 0)
    return pythonError("comparing dict keys");
  return equal == 1;
}

/// \p object's instance dict, or null.
PyObject* instanceDictOf(PyObject* object) {
  PyObject** pointer = _PyObject_GetDictPtr(object);
  return pointer && *pointer && PyDict_Check(*pointer) ? *pointer : nullptr;
}

} // namespace

llvm::Expected<std::optional<ValuePtr>> ValueBuilder::changedEntry(PyObject* dict,
                                                                   PyObject* key) const {
  if (!dict)
    return std::nullopt;
  if (ValuePtr changed = changedContainers_ ? changedContainers_(dict) : nullptr) {
    for (const auto& [entryKey, entryValue] : changed->entries) {
      llvm::Expected<bool> same = isKey(entryKey, key);
      if (!same)
        return same.takeError();
      if (*same)
        return std::optional<ValuePtr>(entryValue);
    }
    // A dict whose entries are unread holds only what the program
    // assigned (UnreadDicts.cpp): the real dict answers for the rest.
    if (changed->unreadItems)
      return std::nullopt;
    // The program removed it (`del table[key]`, `pop`).
    return std::optional<ValuePtr>(ValuePtr());
  }
  if (!assignedEntries_ || !PyUnicode_Check(key))
    return std::nullopt;
  std::optional<std::string> name = python::utf8Of(key);
  if (!name)
    return std::nullopt;
  for (const auto& [assigned, value] : assignedEntries_(dict))
    if (assigned == *name)
      return std::optional<ValuePtr>(value);
  return std::nullopt;
}

std::optional<std::string> ValueBuilder::changedModuleTable(PyObject* module) const {
  PyObject* dict = instanceDictOf(module);
  if (!dict)
    return std::nullopt;
  if (changedContainers_ && changedContainers_(dict))
    return std::string("__dict__");
  for (const char* table : {"_parameters", "_buffers", "_modules"}) {
    PyObject* entries = PyDict_GetItemString(dict, table);
    if (entries && changedContainers_ && changedContainers_(entries))
      return std::string(table);
  }
  return std::nullopt;
}

llvm::Error ValueBuilder::refuseChangedModuleRead(const Value& module, llvm::StringRef what) const {
  if (module.kind != ValueKind::NNModule || module.slicedContainer || !module.object)
    return llvm::Error::success();
  std::optional<std::string> table = changedModuleTable(module.object.get());
  if (!table)
    return llvm::Error::success();
  std::string name = module.source ? module.source->str() : std::string("a module");
  return captureError(what + " " + name + " after the program changed its " + *table +
                      " in this call is not supported yet: the module container's class would "
                      "read the real tables, which capture does not change while capturing");
}

void ValueBuilder::overlayAssignedEntries(Value& value, PyObject* real) const {
  if (!assignedEntries_)
    return;
  for (auto& [name, assigned] : assignedEntries_(real)) {
    PyRef key = PyRef::steal(python::newStr(name));
    bool replaced = false;
    for (auto& [entryKey, entryValue] : value.entries)
      if (entryKey->isConstant() && PyUnicode_Check(entryKey->object.get()) &&
          PyUnicode_Compare(entryKey->object.get(), key.get()) == 0) {
        entryValue = assigned;
        replaced = true;
        break;
      }
    PyErr_Clear();
    if (!replaced)
      value.entries.emplace_back(makeConstant(key), assigned);
  }
}

} // namespace dync::capture
