//===- DictInstances.h - Objects of classes deriving from dict -*- C++ -*-===//
//
// An object of a Python class deriving from dict or collections.OrderedDict
// (a transformers ModelOutput, a config bag) is an Instance value with two
// stores: its instance attributes, as any object made while capturing has,
// and `contents`, a Dict value holding its items. dict's and OrderedDict's
// own methods, reached through the class, through super() or unbound
// (`dict.__setitem__(self, k, v)`), act on the contents.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/Value.h"

#include "llvm/Support/Error.h"

#include <Python.h>

namespace dync::capture {

class BuiltinContext;
class ObjectSemantics;
class SemanticsContext;

/// Whether objects of \p type are made by dict's __new__ and hold their
/// items in a dict: a class written in Python deriving from dict or
/// OrderedDict, or collections.defaultdict and classes deriving from it.
bool isDictClass(PyTypeObject* type);

/// `dict.__new__`, which OrderedDict shares.
PyObject* dictNewFunction();

/// A new object of the dict class \p cls (isDictClass) with no items and no
/// attributes.
ValuePtr newDictInstance(const ValuePtr& cls);

/// The Dict value \p value's items live in: itself for a Dict, its contents
/// for an object of a dict class, null otherwise.
ValuePtr dictContents(const ValuePtr& value);

/// The attributes of the Instance \p instance, once the program may have
/// changed them through its `__dict__`: `entries` is brought up to date.
void syncAttributes(const ValuePtr& instance);

/// Runs the special method \p name (`__getitem__`, `__len__`, ...) of the
/// Instance \p instance on \p args: its class's Python method, else, for an
/// object of a dict class, dict's or OrderedDict's. Null when the class has
/// neither, so the caller's own rule applies.
llvm::Expected<ValuePtr> callInstanceSpecial(SemanticsContext& cx, const ValuePtr& instance,
                                             llvm::StringRef name, std::vector<ValuePtr> args);

/// Whether \p a (a key a dict holds) and \p b are the same dict key, as
/// dict finds one: the same value, equal constants, tuples of constants
/// included (a key built as `(type(p), p, flags)` finds an equal tuple a
/// real dict holds), or objects of equal hashes that compare equal (a
/// uuid.UUID, an object whose class writes __hash__ and __eq__).
llvm::Expected<bool> sameKey(ObjectSemantics& semantics, const ValuePtr& a, const ValuePtr& b);
/// The method \p name of the class of the real object \p object when the
/// class (through its MRO) writes it in Python, as a function (borrowed);
/// null when it has none or inherits a builtin one.
PyObject* pythonMethodOfClass(PyObject* object, llvm::StringRef name);

/// KeyError(key) raised, for a key CPython can hold (a constant, a tuple of
/// them, a real object); else capture stops naming the key's kind.
llvm::Error keyError(SemanticsContext& cx, const ValuePtr& key);

/// collections.OrderedDict, or null when it cannot be imported.
PyTypeObject* orderedDictType();

/// collections.defaultdict, whose objects and those of its subclasses are
/// objects of a dict class too (DictInstancesDefault.cpp).
PyTypeObject* defaultDictType();

/// Registers defaultdict's __init__ and __missing__ (DictInstancesDefault.cpp).
llvm::Error registerDefaultDictHandlers(BuiltinContext& interp);

/// Registers dict's and OrderedDict's __new__, __init__, item and length
/// special methods, and OrderedDict's methods that behave as dict's.
llvm::Error registerDictInstanceHandlers(BuiltinContext& interp);

} // namespace dync::capture
