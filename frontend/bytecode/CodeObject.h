//===- CodeObject.h - Between PyCodeObject and the toolkit ----------------===//
#pragma once

#include "frontend/bytecode/RawCode.h"

#include "llvm/Support/Error.h"

#include <Python.h>

namespace dync::bytecode {

/// Reads co_code, co_exceptiontable, co_linetable, co_firstlineno and
/// co_stacksize of \p code. GIL held.
llvm::Expected<RawCode> readRawCode(PyCodeObject* code);

/// A new code object equal to \p original in everything but the fields in
/// \p raw, built through the C API constructor (not `replace`). Immutable
/// fields equal to the original's (the location and exception tables, the
/// local names tuple) are the original's objects, the way the compiler shares
/// equal constants across a module: marshal marks shared objects, so this is
/// also what makes the two marshal the same. Returns a new reference. GIL
/// held.
llvm::Expected<PyObject*> buildCodeObject(PyCodeObject* original, const RawCode& raw);

} // namespace dync::bytecode
