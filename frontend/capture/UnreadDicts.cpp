//===- UnreadDicts.cpp - Dicts guarded only where the program reads them --===//
//
// A dict in the program's state (an attribute, a global, an item, an
// argument: an exact dict, an OrderedDict, an object of a dict class such
// as diffusers' FrozenDict config) is not read whole when the bytecode
// reaches it: its type is pinned, and its entries are left unread
// (Value::unreadItems). Each entry the program then reads by a constant key
// (`d['k']`) or, for an object of a dict class, each instance attribute it
// reads by name (`config.k`) is read alone, through its own source
// (`SRC['k']`, `SRC.k`), and guarded as that value. Entries never read are
// not guarded: one that differs from process to process (a list in the
// order of a set of strings) or changes between calls leaves the call
// served.
//
// `k in d` and `d.get(k)`, `d.get(k, default)` by a constant key read that
// entry alone too: a present one as `d[k]` reads it (`in` pins its type),
// an absent str key by a guard that the dict has no such key
// (`absent SRC['k']`), so other entries changing leave the call served.
//
// Anything else that observes the dict as a whole (len, iterating,
// keys(), items(), `==`, truth, passing it to a call, returning it from the
// entry, storing it elsewhere) reads it whole first, as it was read before:
// keys pinned in order and every entry guarded (UnreadLists.cpp's
// readAllUnread, which the machine runs on every value it pops). A value
// that is still unread holds no entries, so nothing can read it without
// going through that.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/DictInstances.h"
#include "frontend/capture/DictReads.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/capture/ValueBuilder.h"
#include "frontend/embedding/PyStrings.h"

#include <utility>

namespace dync::capture {

using ir::Source;
using python::PyRef;

namespace {

bool derivesFrom(PyTypeObject* type, PyTypeObject* base) {
  return base && PyType_IsSubtype(type, base);
}

/// Whether `obj[key]` on an object of dict class \p type is its builtin
/// base's item read (dict's or OrderedDict's), which finds what the real
/// dict holds.
bool readsItemsAsBase(PyTypeObject* type) {
  PyTypeObject* base = derivesFrom(type, orderedDictType()) ? orderedDictType() : &PyDict_Type;
  PyRef name = PyRef::steal(python::newStr("__getitem__"));
  if (!name) {
    PyErr_Clear();
    return false;
  }
  return _PyType_Lookup(type, name.get()) == _PyType_Lookup(base, name.get());
}

/// `base.name` when Python's attribute lookup on \p object reads its
/// instance dict for \p name: the generic lookup (dict's own
/// `__getattribute__` is that lookup, so DictReads' check for object's does
/// not apply) and no data descriptor on the class in front of the dict.
SourcePtr genericInstanceRead(const SourcePtr& base, PyObject* object, PyObject* nameObject,
                              llvm::StringRef name) {
  PyTypeObject* type = Py_TYPE(object);
  if (type->tp_getattro != PyObject_GenericGetAttr)
    return nullptr;
  PyObject* descriptor = _PyType_Lookup(type, nameObject);
  if (descriptor && Py_TYPE(descriptor)->tp_descr_set)
    return nullptr;
  return Source::attr(base, name.str());
}

/// The value the program assigned to constant \p key in an unread dict
/// (its entries hold only what was assigned), or null.
ValuePtr assignedEntry(const Value& container, const ValuePtr& key) {
  for (const auto& [assignedKey, assigned] : container.entries) {
    int same = assignedKey->isConstant()
                   ? PyObject_RichCompareBool(assignedKey->object.get(), key->object.get(), Py_EQ)
                   : 0;
    PyErr_Clear();
    if (same == 1)
      return assigned;
  }
  return nullptr;
}

} // namespace

bool storesIntoUnreadDict(const ValuePtr& base, const ValuePtr& key) {
  if (!base->unreadItems || base->kind != ValueKind::Dict || !base->source || !key->isConstant() ||
      !dictKeyOf(key->object.get()))
    return false;
  const Source& source = *base->source;
  return !(source.kind() == Source::Kind::Attr && source.name() == "__dict__");
}

ValuePtr ValueBuilder::knownUnread(PyObject* object) const {
  for (const auto& [real, value] : unreadLists_)
    if (real.get() == object && value->unreadItems)
      return value;
  return nullptr;
}

ValuePtr ValueBuilder::unreadDict(PyObject* object, const SourcePtr& source) {
  // nn.Module's hook tables keep their own reading (ModuleHooks.cpp).
  if (namesHookTable(*source))
    return nullptr;
  PyTypeObject* type = Py_TYPE(object);
  bool plain = PyDict_CheckExact(object) || type == orderedDictType();
  // A defaultdict's missing key runs its factory and changes the dict: it
  // is read whole, as before.
  bool dictObject = !plain && isDictClass(type) && !derivesFrom(type, defaultDictType());
  if (!plain && !dictObject)
    return nullptr;
  // Entries are read by constant keys only; a key guards cannot name (an
  // object) keeps the whole read and its identity guards.
  if (!dictKeys(object))
    return nullptr;
  if (ValuePtr known = knownUnread(object)) {
    guards_.add(typeGuard(source, reinterpret_cast<PyObject*>(type)));
    return known;
  }
  // A dict the program changed in place is that changed value.
  if (changedContainers_ && changedContainers_(object))
    return nullptr;
  guards_.add(typeGuard(source, reinterpret_cast<PyObject*>(type)));
  ValuePtr value;
  if (plain) {
    value = makeValue(ValueKind::Dict, {}, source);
    if (type == orderedDictType())
      value->object = PyRef::borrow(reinterpret_cast<PyObject*>(type));
  } else {
    // Its `contents` and attributes are made when it is read whole.
    value =
        makeValue(ValueKind::Instance, PyRef::borrow(reinterpret_cast<PyObject*>(type)), source);
  }
  value->realContainer = PyRef::borrow(object);
  value->unreadItems = true;
  unreadLists_.emplace_back(PyRef::borrow(object), value);
  return value;
}

llvm::Expected<ValuePtr> ValueBuilder::readUnreadEntry(const ValuePtr& container,
                                                       const ValuePtr& key) {
  if (!container->unreadItems || !container->source || !key->isConstant() ||
      (container->kind != ValueKind::Dict && container->kind != ValueKind::Instance))
    return nullptr;
  PyObject* real = container->realContainer.get();
  if (!real)
    return nullptr;
  if (container->kind == ValueKind::Instance) {
    if (!readsItemsAsBase(Py_TYPE(real)))
      return nullptr;
    // The class's item read, pinned as a read of the whole would pin it.
    guardDictClassRead(container, "__getitem__");
  }
  std::optional<ir::DictKey> dictKey = dictKeyOf(key->object.get());
  if (!dictKey)
    return nullptr;
  // An entry the program assigned is what it assigned, unguarded.
  if (ValuePtr assigned = assignedEntry(*container, key))
    return assigned;
  // An attribute the program assigned is what a namespace holds now.
  if (container->kind == ValueKind::Dict && assignedEntries_ &&
      PyUnicode_CheckExact(key->object.get()))
    if (std::optional<std::string> name = python::utf8Of(key->object.get()))
      for (auto& [assignedName, assigned] : assignedEntries_(real))
        if (assignedName == *name)
          return assigned;
  PyObject* item = PyDict_GetItemWithError(real, key->object.get());
  if (!item) {
    // Absent: what the program does then (KeyError, a default) depends on
    // the keys, which a whole read pins.
    PyErr_Clear();
    return nullptr;
  }
  return wrapReal(item, Source::item(container->source, *dictKey));
}

llvm::Expected<ValuePtr> ValueBuilder::readUnreadAttribute(const ValuePtr& object,
                                                           llvm::StringRef name) {
  if (!object->unreadItems || object->kind != ValueKind::Instance || !object->source)
    return nullptr;
  PyObject* real = object->realContainer.get();
  PyObject** dictPointer = real ? _PyObject_GetDictPtr(real) : nullptr;
  PyObject* attributes = dictPointer ? *dictPointer : nullptr;
  PyRef nameObject = PyRef::steal(python::newStr(name));
  if (!attributes || !PyDict_Check(attributes) || !nameObject) {
    PyErr_Clear();
    return nullptr;
  }
  PyObject* item = PyDict_GetItemWithError(attributes, nameObject.get());
  if (!item) {
    PyErr_Clear();
    return nullptr;
  }
  // Only where Python's lookup reads the instance dict (no data descriptor
  // on the class in front of it, no __getattribute__ of the class's own).
  SourcePtr source = genericInstanceRead(object->source, real, nameObject.get(), name);
  if (!source)
    return nullptr;
  // What the class gives for the name is pinned, as a read of the whole
  // object pins it (a data descriptor added later would come first).
  guardDictClassRead(object, name);
  return wrapReal(item, source);
}

std::optional<bool> ValueBuilder::containsUnread(const ValuePtr& container, const ValuePtr& key) {
  if (!container->unreadItems || container->kind != ValueKind::Dict || !container->source ||
      !key->isConstant())
    return std::nullopt;
  PyObject* real = container->realContainer.get();
  std::optional<ir::DictKey> dictKey = real ? dictKeyOf(key->object.get()) : std::nullopt;
  if (!dictKey)
    return std::nullopt;
  if (assignedEntry(*container, key))
    return true;
  const Source& source = *container->source;
  bool names = source.kind() == Source::Kind::Attr && source.name() == "__dict__";
  // A namespace's attributes the program assigned are found by reading it.
  if (names && assignedEntries_ && !assignedEntries_(real).empty())
    return std::nullopt;
  PyObject* item = PyDict_GetItemWithError(real, key->object.get());
  if (item) {
    guards_.add(typeGuard(Source::item(container->source, *dictKey),
                          reinterpret_cast<PyObject*>(Py_TYPE(item))));
    return true;
  }
  PyErr_Clear();
  // An absent str key has a guard: an instance dict's `absent SRC.name`, a
  // dict's `absent SRC['k']` (no key a str equals, checked natively).
  if (!PyUnicode_CheckExact(key->object.get()))
    return std::nullopt;
  std::optional<std::string> name = python::utf8Of(key->object.get());
  if (!name || name->find('\0') != std::string::npos)
    return std::nullopt;
  guards_.add(ir::Guard::absent(names ? Source::attr(source.base(), *name)
                                      : Source::key(container->source, *name)));
  return false;
}

llvm::Expected<std::optional<ValuePtr>>
ValueBuilder::getUnread(const ValuePtr& container, const ValuePtr& key, const ValuePtr& fallback) {
  if (container->kind != ValueKind::Dict)
    return std::nullopt;
  llvm::Expected<ValuePtr> entry = readUnreadEntry(container, key);
  if (!entry)
    return entry.takeError();
  if (*entry)
    return std::optional<ValuePtr>(*entry);
  // Absent (or an entry readUnreadEntry leaves to a whole read): the
  // default only where the absence itself is guarded.
  std::optional<bool> has = containsUnread(container, key);
  if (!has || *has)
    return std::nullopt;
  return std::optional<ValuePtr>(fallback ? fallback : makeNone());
}

std::optional<bool> ValueBuilder::hasattrUnread(const ValuePtr& object, llvm::StringRef name) {
  if (!object->unreadItems || object->kind != ValueKind::Instance || !object->source ||
      name.contains('\0'))
    return std::nullopt;
  PyObject* real = object->realContainer.get();
  PyObject** dictPointer = real ? _PyObject_GetDictPtr(real) : nullptr;
  PyObject* attributes = dictPointer ? *dictPointer : nullptr;
  PyRef nameObject = PyRef::steal(python::newStr(name));
  PyRef getattrName = PyRef::steal(python::newStr("__getattr__"));
  if (!attributes || !PyDict_Check(attributes) || !nameObject || !getattrName) {
    PyErr_Clear();
    return std::nullopt;
  }
  PyTypeObject* type = Py_TYPE(real);
  if (PyObject* item = PyDict_GetItemWithError(attributes, nameObject.get())) {
    SourcePtr source = genericInstanceRead(object->source, real, nameObject.get(), name);
    if (!source)
      return std::nullopt;
    guardDictClassRead(object, name);
    guards_.add(typeGuard(source, reinterpret_cast<PyObject*>(Py_TYPE(item))));
    return true;
  }
  PyErr_Clear();
  // Absent only when nothing else gives it: not the class (through its
  // MRO) and no __getattr__.
  if (type->tp_getattro != PyObject_GenericGetAttr || _PyType_Lookup(type, nameObject.get()) ||
      _PyType_Lookup(type, getattrName.get()))
    return std::nullopt;
  guardDictClassRead(object, name);
  guardDictClassRead(object, "__getattr__");
  guards_.add(ir::Guard::absent(Source::attr(object->source, name.str())));
  return false;
}

llvm::Error ValueBuilder::readUnreadDict(const ValuePtr& value) {
  PyObject* object = value->realContainer.get();
  value->unreadItems = false;
  // Read as wrapReal reads such a dict whole: keys pinned, every entry and
  // attribute read through its source, as the call's entry had them (not
  // as this value, which the program may have assigned entries of).
  std::vector<std::pair<ValuePtr, ValuePtr>> assigned = std::move(value->entries);
  value->entries.clear();
  bool previous = std::exchange(unreadListReads_, false);
  PyObject* previousWhole = std::exchange(wholeReadOf_, object);
  llvm::Expected<ValuePtr> whole = wrapReal(object, value->source);
  unreadListReads_ = previous;
  wholeReadOf_ = previousWhole;
  if (!whole)
    return whole.takeError();
  if (whole->get() != value.get()) {
    value->entries = (*whole)->entries;
    value->contents = (*whole)->contents;
    if (value->kind == ValueKind::Dict)
      value->object = (*whole)->object;
  }
  // Then what the program assigned, in place or after, as dict stores it.
  for (auto& [key, item] : assigned) {
    bool replaced = false;
    for (auto& [existing, held] : value->entries) {
      int same = existing->isConstant()
                     ? PyObject_RichCompareBool(existing->object.get(), key->object.get(), Py_EQ)
                     : 0;
      PyErr_Clear();
      if (same == 1) {
        held = item;
        replaced = true;
        break;
      }
    }
    if (!replaced)
      value->entries.emplace_back(key, item);
  }
  return llvm::Error::success();
}

} // namespace dync::capture
