//===- ModuleAttributes.h - Reading a module's tables into C++ -------------===//
//
// The interpreter describes itself in module-level tables (opcode.opmap,
// opcode.cmp_op, dis.MAKE_FUNCTION_FLAGS, ...); these read them, naming the
// table in any error.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/embedding/PyRef.h"

#include "llvm/Support/Error.h"

#include <Python.h>

#include <optional>
#include <string>
#include <vector>

namespace dync::python {

/// `module.name`. GIL held.
llvm::Expected<PyRef> moduleAttribute(PyObject* module, const char* name);

/// The items of the sequence `module.name`, as new references. GIL held.
llvm::Expected<std::vector<PyRef>> sequenceAttribute(PyObject* module, const char* name);

/// The strs in the sequence `module.name`; with \p field, each item is a
/// sequence itself (a (value, spelling) pair, say) and its str is the one at
/// that index. GIL held.
llvm::Expected<std::vector<std::string>>
stringsAttribute(PyObject* module, const char* name,
                 std::optional<Py_ssize_t> field = std::nullopt);

} // namespace dync::python
