//===- PythonHelpers.h - Small C API conveniences for capture -------------===//
#pragma once

#include "frontend/embedding/PyRef.h"
#include "ir/Guard.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <Python.h>

#include <string>

namespace dync::capture {

/// Takes the pending Python exception and returns a CaptureError saying
/// "<what>: <Type>: <message>". GIL held.
llvm::Error pythonError(const llvm::Twine& what);

/// `module.attr.attr` imported and looked up; a new reference.
llvm::Expected<python::PyRef> importObject(llvm::StringRef dottedName);

/// "torch.nn.modules.linear.Linear", "int": how guards and messages name a
/// type.
std::string qualifiedTypeName(PyObject* type);

/// A `type` guard: the value at \p source has type \p type, named by its
/// __module__ and __qualname__.
ir::Guard typeGuard(ir::SourcePtr source, PyObject* type);
/// A `class` guard: the value at \p source is the class \p type, named by
/// its __module__ and __qualname__.
ir::Guard classGuard(ir::SourcePtr source, PyObject* type);

/// repr(object) as UTF-8; a placeholder when repr fails.
std::string reprOf(PyObject* object);

/// A short description for messages: "function 'relu'", "builtin 'print'",
/// "object of type 'Foo'".
std::string describeObject(PyObject* object);

/// The text of \p line in \p file through linecache, without the newline.
std::string sourceLine(const std::string& file, int line);

} // namespace dync::capture
