//===- DictReads.cpp - The dictionary reads sources are made of -----------===//
#include "frontend/capture/DictReads.h"

#include "frontend/embedding/PyRef.h"
#include "frontend/embedding/PyStrings.h"

#include <cmath>

namespace dync::capture {

using ir::Source;
using ir::SourcePtr;
using python::PyRef;

namespace {

/// Whether attribute reads on instances of \p type are Python's generic
/// lookup: object's, type's or module's __getattribute__, not an override
/// that could answer without reading the dict.
bool hasGenericGetattribute(PyTypeObject* type) {
  static PyObject* name = PyUnicode_InternFromString("__getattribute__");
  PyObject* own = _PyType_Lookup(type, name);
  return own &&
         (own == _PyType_Lookup(&PyBaseObject_Type, name) ||
          own == _PyType_Lookup(&PyType_Type, name) || own == _PyType_Lookup(&PyModule_Type, name));
}

/// \p object's instance __dict__ (a module's md_dict, a class's tp_dict), or
/// null.
PyObject* instanceDict(PyObject* object) {
  PyObject** pointer = _PyObject_GetDictPtr(object);
  PyObject* dict = pointer ? *pointer : nullptr;
  return dict && PyDict_Check(dict) ? dict : nullptr;
}

/// dict[key] without raising; null if absent.
PyObject* lookup(PyObject* dict, PyObject* key) {
  PyObject* value = PyDict_GetItemWithError(dict, key);
  if (!value)
    PyErr_Clear();
  return value;
}

/// dictKeyOf, \p depth tuples down.
std::optional<ir::DictKey> keyConstant(PyObject* key, int depth) {
  if (key == Py_None)
    return ir::DictKey::none();
  if (PyBool_Check(key))
    return ir::DictKey::boolean(key == Py_True);
  if (PyLong_CheckExact(key)) {
    int overflow = 0;
    long long value = PyLong_AsLongLongAndOverflow(key, &overflow);
    if (overflow || (value == -1 && PyErr_Occurred())) {
      PyErr_Clear();
      return std::nullopt;
    }
    return ir::DictKey::integer(value);
  }
  if (PyFloat_CheckExact(key)) {
    // A NaN key is found only by identity, which a rebuilt key is not.
    double value = PyFloat_AS_DOUBLE(key);
    if (!std::isfinite(value))
      return std::nullopt;
    return ir::DictKey::floating(value);
  }
  if (PyUnicode_CheckExact(key)) {
    std::optional<std::string> text = python::utf8Of(key);
    if (!text)
      PyErr_Clear();
    return text ? std::optional<ir::DictKey>(ir::DictKey::str(std::move(*text))) : std::nullopt;
  }
  if (!PyTuple_CheckExact(key) || depth > 8)
    return std::nullopt;
  std::vector<ir::DictKey> elements;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(key); ++i) {
    std::optional<ir::DictKey> element = keyConstant(PyTuple_GET_ITEM(key, i), depth + 1);
    if (!element)
      return std::nullopt;
    elements.push_back(std::move(*element));
  }
  return ir::DictKey::tuple(std::move(elements));
}

} // namespace

SourcePtr instanceDictSource(const SourcePtr& base, PyObject* object, PyObject* name,
                             PyObject* value) {
  if (!base || !PyUnicode_CheckExact(name))
    return nullptr;
  PyTypeObject* type = Py_TYPE(object);
  if (!hasGenericGetattribute(type))
    return nullptr;
  // A data descriptor on the type (a property, a __slots__ member) comes
  // before the instance dict in Python's lookup.
  PyObject* descriptor = _PyType_Lookup(type, name);
  if (descriptor && Py_TYPE(descriptor)->tp_descr_set)
    return nullptr;
  PyObject* dict = instanceDict(object);
  if (!dict || lookup(dict, name) != value)
    return nullptr;
  std::optional<std::string> text = python::utf8Of(name);
  if (!text)
    return nullptr;
  return Source::attr(base, *text);
}

SourcePtr moduleTableSource(const SourcePtr& base, PyObject* module, const char* table,
                            PyObject* name, PyObject* value) {
  if (!base || !PyUnicode_CheckExact(name))
    return nullptr;
  PyObject* dict = instanceDict(module);
  PyRef tableName = PyRef::steal(PyUnicode_FromString(table));
  PyObject* entries = dict && tableName ? lookup(dict, tableName.get()) : nullptr;
  if (!entries || !PyDict_CheckExact(entries) || lookup(entries, name) != value)
    return nullptr;
  SourcePtr tableSource = instanceDictSource(base, module, tableName.get(), entries);
  std::optional<std::string> key = python::utf8Of(name);
  if (!tableSource || !key)
    return nullptr;
  return Source::key(tableSource, *key);
}

std::pair<SourcePtr, PyObject*> moduleTable(const SourcePtr& base, PyObject* module,
                                            const char* table) {
  if (!base)
    return {nullptr, nullptr};
  PyObject* dict = instanceDict(module);
  PyRef tableName = PyRef::steal(PyUnicode_FromString(table));
  PyObject* entries = dict && tableName ? lookup(dict, tableName.get()) : nullptr;
  if (!entries || !PyDict_CheckExact(entries))
    return {nullptr, nullptr};
  SourcePtr source = instanceDictSource(base, module, tableName.get(), entries);
  return {source, source ? entries : nullptr};
}

std::optional<std::vector<std::string>> strKeys(PyObject* dict) {
  std::vector<std::string> keys;
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(dict, &pos, &key, &value)) {
    std::optional<std::string> name =
        PyUnicode_CheckExact(key) ? python::utf8Of(key) : std::nullopt;
    if (!name)
      return std::nullopt;
    keys.push_back(std::move(*name));
  }
  return keys;
}

std::optional<ir::DictKey> dictKeyOf(PyObject* key) { return keyConstant(key, 0); }

std::optional<std::vector<ir::DictKey>> dictKeys(PyObject* dict) {
  std::vector<ir::DictKey> keys;
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(dict, &pos, &key, &value)) {
    std::optional<ir::DictKey> constant = dictKeyOf(key);
    if (!constant)
      return std::nullopt;
    keys.push_back(std::move(*constant));
  }
  return keys;
}

bool namesHookTable(const Source& source) {
  return source.kind() == Source::Kind::Attr && llvm::StringRef(source.name()).contains("hooks");
}

SourcePtr containerItemSource(const SourcePtr& base, PyObject* container, PyObject* key,
                              PyObject* item) {
  if (!base)
    return nullptr;
  PyObject* dict = instanceDict(container);
  if (!dict)
    return nullptr;
  for (const char* table : {"_modules", "_parameters", "_buffers"}) {
    if (PyUnicode_CheckExact(key)) {
      if (SourcePtr source = moduleTableSource(base, container, table, key, item))
        return source;
      continue;
    }
    if (!PyLong_CheckExact(key))
      return nullptr;
    PyObject* entries = lookup(dict, PyRef::steal(PyUnicode_FromString(table)).get());
    if (!entries || !PyDict_CheckExact(entries))
      continue;
    int overflow = 0;
    long long index = PyLong_AsLongLongAndOverflow(key, &overflow);
    Py_ssize_t size = PyDict_GET_SIZE(entries);
    if (overflow || index < -size || index >= size)
      continue;
    if (index < 0)
      index += size;
    // The entry at that position, in the dict's (insertion) order.
    PyObject *entryKey, *entryValue;
    Py_ssize_t pos = 0;
    for (long long i = 0; PyDict_Next(entries, &pos, &entryKey, &entryValue); ++i) {
      if (i != index)
        continue;
      if (entryValue == item)
        if (SourcePtr source = moduleTableSource(base, container, table, entryKey, item))
          return source;
      break;
    }
  }
  return nullptr;
}

} // namespace dync::capture
