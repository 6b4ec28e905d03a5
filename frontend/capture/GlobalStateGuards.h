//===- GlobalStateGuards.h - Guards on torch's global state ---------------===//
//
// The items of torch's global state that change what the same calls compute
// without appearing in any argument (deterministic algorithms and their
// fill of uninitialized memory, flush-denormal, torch function and dispatch
// modes, the oneDNN, NNPACK and CPU float16-reduction switches), read when
// capture starts, as `global_state` guards.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Guard.h"

#include "llvm/Support/Error.h"

#include <Python.h>

#include <vector>

namespace dync::capture {

/// One `global_state` guard per item, with its value now. Fails when a torch
/// function or dispatch mode is active: capture does not run modes, so a
/// graph captured under one would not be what eager computes.
llvm::Expected<std::vector<ir::Guard>> readGlobalStateGuards(PyObject* torch);

} // namespace dync::capture
