//===- PyStrings.h - Reading Python objects as UTF-8 text ------------------===//
#pragma once

#include <Python.h>

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace dync::python {

/// The UTF-8 text of a str object, or nothing if \p object is not a str or
/// cannot be encoded. Never leaves a Python exception set. GIL held.
std::optional<std::string> utf8Of(PyObject* object);

/// str(object) as UTF-8; a placeholder naming the type when str() fails.
/// Never leaves a Python exception set. GIL held.
std::string strOf(PyObject* object);

/// The name Python's tracebacks use for a type: "ValueError" for builtins,
/// "module.Qual.Name" otherwise. GIL held.
std::string typeDisplayName(PyTypeObject* type);

/// A new str from UTF-8 text (surrogate-escaping bytes that are not UTF-8,
/// as file system paths are). Null with an exception set on failure.
PyObject* newStr(llvm::StringRef text);

/// The text of the items of \p sequence that are str, in order; nothing if
/// it is not a sequence. Never leaves a Python exception set. GIL held.
std::vector<std::string> strItemsOf(PyObject* sequence);

/// The names dir(object) lists, skipping any that are not str. Never leaves
/// a Python exception set. GIL held.
std::vector<std::string> dirOf(PyObject* object);

} // namespace dync::python
