//===- ValueBuilderDicts.cpp - Real objects of dict subclasses as values --===//
//
// An OrderedDict, a defaultdict or an object of a class deriving from dict
// that the program holds (a module's table, a global, a closure cell, a
// class attribute) and capture reads through a source: its items are read
// as an exact dict's are, each through its own `SRC['key']` source, with
// the type and the keys (in the object's own iteration order) guarded. A
// change made after export (an item assigned, added or removed) then misses
// the guards or is read again by the rewritten code as a graph input.
//
// An exact OrderedDict is a Dict value whose `object` is the OrderedDict
// class, as one made while capturing is. An object of any other dict class
// (DictInstances.h) is an Instance whose `contents` holds the sourced items
// and whose attributes are its instance dict's, each read through
// `SRC.name`: the class's own Python methods (`__getitem__`, `__missing__`,
// `get`) run inlined over the contents, and defaultdict's `__missing__` is
// modelled, so what capture computes is what eager computes from the same
// items. A defaultdict's factory is pinned where a guard can pin it.
//
// Reading the items this way is what eager's `obj['key']` does only while
// the class's item read is dict's (a key present, which the keys guard
// ensures): a class with a `__getitem__` of its own in Python has its items
// guarded, but a tensor among them cannot be a graph input, whose read by
// the rewritten code would run that method. Such a tensor, a key that is not
// a constant a source can name (DictReads.h), and a dict class capture does
// not model stop capture with a message saying so.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/DictInstances.h"
#include "frontend/capture/DictReads.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/capture/ValueBuilder.h"
#include "frontend/embedding/PyStrings.h"

namespace dync::capture {

using ir::Guard;
using ir::Source;
using python::PyRef;

namespace {

bool derivesFrom(PyTypeObject* type, PyTypeObject* base) {
  return base && PyType_IsSubtype(type, base);
}

/// The builtin class \p type's objects are laid out as: dict, OrderedDict or
/// defaultdict.
PyTypeObject* builtinDictBase(PyTypeObject* type) {
  if (derivesFrom(type, defaultDictType()))
    return defaultDictType();
  if (derivesFrom(type, orderedDictType()))
    return orderedDictType();
  return &PyDict_Type;
}

/// Whether \p type looks \p name up to what its builtin base has.
bool inheritsFromBuiltin(PyTypeObject* type, const char* name) {
  PyRef key = PyRef::steal(python::newStr(name));
  if (!key) {
    PyErr_Clear();
    return false;
  }
  return _PyType_Lookup(type, key.get()) == _PyType_Lookup(builtinDictBase(type), key.get());
}

/// The entries of the dict object \p object, keys and values, in the order
/// iterating it gives: an OrderedDict's own (its linked list, which
/// `move_to_end` changes), found by its C iterator so that no Python
/// `__iter__` of a subclass runs; else the dict's storage order.
llvm::Expected<std::vector<std::pair<PyObject*, PyObject*>>> entriesInOrder(PyObject* object) {
  std::vector<std::pair<PyObject*, PyObject*>> entries;
  PyTypeObject* ordered = orderedDictType();
  if (!ordered || !PyObject_TypeCheck(object, ordered)) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(object, &pos, &key, &value))
      entries.emplace_back(key, value);
    return entries;
  }
  PyRef iterator = PyRef::steal(ordered->tp_iter(object));
  if (!iterator)
    return pythonError("iterating an OrderedDict's keys");
  while (PyObject* key = PyIter_Next(iterator.get())) {
    PyRef owned = PyRef::steal(key);
    PyObject* value = PyDict_GetItemWithError(object, key);
    if (!value)
      return pythonError("reading an OrderedDict's item");
    entries.emplace_back(key, value);
  }
  if (PyErr_Occurred())
    return pythonError("iterating an OrderedDict's keys");
  return entries;
}

/// `M['module'].name` when the class \p object is the attribute `name` of
/// its module, as imported: what pins which class a value is.
SourcePtr classSource(PyObject* object) {
  if (!PyType_Check(object))
    return nullptr;
  auto* type = reinterpret_cast<PyTypeObject*>(object);
  std::string qualified = qualifiedTypeName(object);
  llvm::StringRef module, name;
  if (!(type->tp_flags & Py_TPFLAGS_HEAPTYPE) && !llvm::StringRef(type->tp_name).contains('.')) {
    module = "builtins";
    name = type->tp_name;
  } else {
    std::tie(module, name) = llvm::StringRef(qualified).rsplit('.');
  }
  if (module.empty() || name.empty() || name.contains('.') || name.contains('<'))
    return nullptr;
  PyRef moduleName = PyRef::steal(python::newStr(module));
  PyRef imported = moduleName ? PyRef::steal(PyImport_GetModule(moduleName.get())) : PyRef();
  PyErr_Clear();
  if (!imported || !PyModule_Check(imported.get()))
    return nullptr;
  PyObject* held = PyDict_GetItemString(PyModule_GetDict(imported.get()), name.str().c_str());
  return held == object ? Source::attr(Source::module(module), name) : nullptr;
}

} // namespace

std::optional<llvm::Expected<ValuePtr>> ValueBuilder::wrapDictObject(PyObject* object,
                                                                     const SourcePtr& source) {
  auto* type = Py_TYPE(object);
  PyObject* typeObject = reinterpret_cast<PyObject*>(type);
  std::string where = source->str() + " (a " + qualifiedTypeName(typeObject) + ")";
  bool exactOrdered = type == orderedDictType();
  if (!exactOrdered && !isDictClass(type))
    return llvm::Expected<ValuePtr>(captureError(
        where + " is an object of a dict class capture does not model (written in C, or with "
                "a __new__ of its own); its items cannot be read through guards, so this is "
                "not supported yet"));
  llvm::Expected<std::vector<std::pair<PyObject*, PyObject*>>> entries = entriesInOrder(object);
  if (!entries)
    return llvm::Expected<ValuePtr>(entries.takeError());
  // nn.Module's hook tables keep their own reading (ModuleHooks.cpp).
  if (namesHookTable(*source))
    return std::nullopt;
  std::vector<ir::DictKey> keys;
  for (const auto& [key, item] : *entries) {
    std::optional<ir::DictKey> name = dictKeyOf(key);
    if (!name)
      return llvm::Expected<ValuePtr>(captureError(
          where + " has the key " + reprOf(key) +
          ", which is not an int, str, bool, finite float, None or a tuple of those; the items "
          "of a dict object the program holds are guarded by such keys only, so this is not "
          "supported yet"));
    keys.push_back(std::move(*name));
  }
  // A __getitem__ of the class's own would run when the rewritten code
  // reads a tensor item as a graph input.
  bool ownItemRead = !exactOrdered && !inheritsFromBuiltin(type, "__getitem__");
  guards_.add(typeGuard(source, typeObject));
  guards_.add(Guard::keysAre(source, keys));
  ValuePtr contents = makeValue(ValueKind::Dict, {}, source);
  if (derivesFrom(type, orderedDictType()))
    contents->object = PyRef::borrow(reinterpret_cast<PyObject*>(orderedDictType()));
  for (size_t i = 0; i < entries->size(); ++i) {
    auto [key, item] = (*entries)[i];
    SourcePtr itemSource = Source::item(source, keys[i]);
    if (ownItemRead && PyObject_IsInstance(item, types_.tensor.get()) == 1)
      return llvm::Expected<ValuePtr>(captureError(
          where + " holds a tensor at " + itemSource->str() +
          " and its class has a __getitem__ of "
          "its own, which reading the tensor as a graph input would run; not supported yet"));
    PyErr_Clear();
    llvm::Expected<ValuePtr> wrapped = wrapReal(item, itemSource);
    if (!wrapped)
      return llvm::Expected<ValuePtr>(wrapped.takeError());
    contents->entries.emplace_back(makeConstant(PyRef::borrow(key)), *wrapped);
  }
  // A change in place is replayed after the graph as `clear()` then
  // `update()` (SideEffects.cpp); that is the change eager made only when
  // the class stores items as its builtin base does. Otherwise the contents
  // keep no real container, and a change stops capture.
  if (exactOrdered)
    return llvm::Expected<ValuePtr>(callersContainer(std::move(contents), object));
  bool replayable = true;
  for (const char* name : {"__setitem__", "__delitem__", "clear", "update"})
    replayable = replayable && inheritsFromBuiltin(type, name);
  if (replayable)
    contents = callersContainer(std::move(contents), object);
  ValuePtr instance = makeValue(ValueKind::Instance, PyRef::borrow(typeObject), source);
  instance->contents = contents;
  // Its identity (`is`) is the real object's (Operators.cpp).
  instance->realContainer = PyRef::borrow(object);
  // The instance's own attributes, each read through `SRC.name`.
  PyObject** dictPointer = _PyObject_GetDictPtr(object);
  if (PyObject* attributes = dictPointer ? *dictPointer : nullptr) {
    PyObject *name, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(attributes, &pos, &name, &value)) {
      std::optional<std::string> text =
          PyUnicode_CheckExact(name) ? python::utf8Of(name) : std::nullopt;
      if (!text)
        return llvm::Expected<ValuePtr>(captureError(
            where + " has an instance attribute whose name is not a str; not supported"));
      llvm::Expected<ValuePtr> wrapped = wrapReal(value, Source::attr(source, *text));
      if (!wrapped)
        return llvm::Expected<ValuePtr>(wrapped.takeError());
      instance->entries.emplace_back(makeConstant(PyRef::borrow(name)), *wrapped);
    }
  }
  // defaultdict's factory, a member of its C struct that __missing__ calls:
  // pinned by value, as a function, or as the class its module names.
  if (derivesFrom(type, defaultDictType())) {
    PyRef factory = PyRef::steal(PyObject_GetAttrString(object, "default_factory"));
    if (!factory)
      return llvm::Expected<ValuePtr>(pythonError("reading " + source->str() + ".default_factory"));
    SourcePtr factorySource = Source::attr(source, "default_factory");
    SourcePtr pinnedClass = classSource(factory.get());
    bool pinned = factory.get() == Py_None || PyFunction_Check(factory.get()) ||
                  PyCFunction_Check(factory.get()) || pinnedClass;
    if (!pinned)
      return llvm::Expected<ValuePtr>(captureError(
          where + " has a default_factory (" + describeObject(factory.get()) +
          ") that guards cannot pin (not None, a function or a class its module names); not "
          "supported yet"));
    llvm::Expected<ValuePtr> wrapped = wrapReal(factory.get(), factorySource);
    if (!wrapped)
      return llvm::Expected<ValuePtr>(wrapped.takeError());
    if (pinnedClass)
      guards_.add(Guard::same(factorySource, pinnedClass));
    instance->entries.emplace_back(makeConstantSteal(python::newStr("default_factory")), *wrapped);
  }
  return llvm::Expected<ValuePtr>(instance);
}

void ValueBuilder::guardDictClassRead(const ValuePtr& instance, llvm::StringRef name) {
  if (instance->kind != ValueKind::Instance || !instance->source || !instance->object ||
      !PyType_Check(instance->object.get()))
    return;
  auto* type = reinterpret_cast<PyTypeObject*>(instance->object.get());
  // A class written in C (an exact defaultdict) cannot be changed.
  if (!(type->tp_flags & Py_TPFLAGS_HEAPTYPE))
    return;
  PyRef key = PyRef::steal(python::newStr(name));
  if (!key) {
    PyErr_Clear();
    return;
  }
  SourcePtr source = Source::classAttr(instance->source, name);
  PyObject* found = _PyType_Lookup(type, key.get());
  if (!found) {
    guards_.add(Guard::absent(source));
    return;
  }
  if (PyFunction_Check(found)) {
    llvm::Expected<ValuePtr> pinned = functionFromReal(found, source);
    if (!pinned)
      llvm::consumeError(pinned.takeError());
    return;
  }
  // The class of the MRO whose own dict holds it: a builtin base (dict,
  // OrderedDict, defaultdict, object), named through its module.
  PyObject* mro = type->tp_mro;
  for (Py_ssize_t i = 0; mro && PyTuple_Check(mro) && i < PyTuple_GET_SIZE(mro); ++i) {
    auto* base = reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(mro, i));
    if (!base->tp_dict || PyDict_GetItemWithError(base->tp_dict, key.get()) != found) {
      PyErr_Clear();
      continue;
    }
    if (base->tp_flags & Py_TPFLAGS_HEAPTYPE)
      break;
    if (SourcePtr owner = classSource(reinterpret_cast<PyObject*>(base)))
      guards_.add(Guard::same(source, Source::attr(owner, name)));
    return;
  }
  // Anything else the class itself holds (a constant, a staticmethod): a
  // constant by value, the rest by type.
  bool constant = found == Py_None || PyBool_Check(found) || PyLong_CheckExact(found) ||
                  PyFloat_CheckExact(found) || PyUnicode_CheckExact(found);
  if (!constant) {
    guards_.add(typeGuard(source, reinterpret_cast<PyObject*>(Py_TYPE(found))));
    return;
  }
  llvm::Expected<ValuePtr> pinned = wrapReal(found, source);
  if (!pinned)
    llvm::consumeError(pinned.takeError());
}

} // namespace dync::capture
