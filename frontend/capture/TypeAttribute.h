//===- TypeAttribute.h - A class attribute as the MRO finds it ------------===//
//
// The lookup Python's attribute protocol starts from: the first class of
// the MRO whose dict holds the name, without running descriptors. Capture
// asks it to tell a class's own behaviour from what it inherits.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/embedding/PyRef.h"
#include "frontend/embedding/PyStrings.h"

#include "llvm/ADT/StringRef.h"

#include <Python.h>

namespace dync::capture {

/// The attribute \p name of \p type as the MRO finds it (borrowed; null
/// when absent).
inline PyObject* typeAttribute(PyTypeObject* type, llvm::StringRef name) {
  python::PyRef key = python::PyRef::steal(python::newStr(name));
  return _PyType_Lookup(type, key.get());
}

} // namespace dync::capture
