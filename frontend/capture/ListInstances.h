//===- ListInstances.h - Objects of classes deriving from list -*- C++ -*-===//
//
// An object of a Python class deriving from list (`class Layers(list)`
// holding modules, with methods of its own) is a List value whose `object`
// is its class: list's own methods, iteration, `len` and subscripts act on
// its items as on a list's, and the class's Python methods bind to it.
// Objects without instance attributes only: a list value has no store for
// them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/Value.h"

#include "llvm/Support/Error.h"

#include <Python.h>

#include <string>

namespace dync::capture {

class BuiltinContext;

/// Whether objects of \p type are lists capture models as List values of
/// that class: a class written in Python deriving from list that keeps
/// list's __new__.
bool isListClass(PyTypeObject* type);

/// The first special method (`__getitem__`, `__add__`, ...) that \p type, a
/// list class, or a base of it other than list defines, or an empty string:
/// capture models list's own behaviour over a list value, so a class that
/// changes it is not modelled.
std::string ownSpecialMethod(PyTypeObject* type);

/// Whether a real object of the list class \p type reads its items as a
/// list does (no __getitem__, __len__, __iter__ or __setitem__ of its own),
/// so that its items can be read, guarded and refilled through `[i]`.
bool readsAsList(PyTypeObject* type);

/// A new, empty object of the list class \p cls.
ValuePtr newListInstance(const ValuePtr& cls);

/// Registers list's `__init__`, which the classes' `__init__` (or
/// `super().__init__(items)`) runs on such an object.
llvm::Error registerListInstanceHandlers(BuiltinContext& interp);

} // namespace dync::capture
