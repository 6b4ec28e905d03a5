//===- LibraryPreparation.h - Libraries torch prepares before tracing -----===//
//
// Some libraries fill caches on their first call that their later calls
// read (einops resolves a tensor type's backend once and keeps it in a
// dict). A capture that runs such a library cold follows the cold path
// (class introspection, imports, the cache's first fill) and guards the
// empty cache, so the artifact misses in any process that has used the
// library since. torch keeps a registry of such libraries, with the
// function that warms each (`torch._dynamo.trace_rules.add_module_init_func`,
// einops' registered by torch itself), and runs it before tracing the
// library's first function; capture does the same.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/Support/Error.h"

#include <Python.h>

namespace dync::capture {

/// Runs torch's registered preparation for the library that defines the
/// function whose globals are \p globals, once per library and process,
/// before capture runs that function's code. Functions of torch, of the
/// standard library and of the entry's own module are not looked up.
llvm::Error prepareLibraryForTracing(PyObject* globals);

} // namespace dync::capture
