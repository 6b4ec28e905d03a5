//===- ImportedAttribute.h - A function of a module already imported ------===//
//
// Capture recognizes some of torch's functions by identity (torch.cond,
// torch.compiler.is_exporting, torch.manual_seed). It reads them only from
// modules the program's process has imported already: a program cannot call
// a function of a module no one imported, and importing one would run code
// the program never ran.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <Python.h>

namespace dync::capture {

/// `module.name` when \p module is in sys.modules and has that attribute,
/// else nullptr. Borrowed: the module keeps it alive. GIL held.
PyObject* importedAttribute(const char* module, const char* name);

} // namespace dync::capture
