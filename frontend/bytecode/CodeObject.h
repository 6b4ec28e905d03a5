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

/// The same for a new body that refers to its own constants and names: the
/// result has \p original's signature, flags, local names, cells, free
/// variables, name, qualname and file, and \p consts and \p names (tuples,
/// borrowed) as co_consts and co_names. Returns a new reference. GIL held.
llvm::Expected<PyObject*> buildCodeObject(PyCodeObject* original, const RawCode& raw,
                                          PyObject* consts, PyObject* names);

} // namespace dync::bytecode
