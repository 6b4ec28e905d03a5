//===- EntryFunction.h - The entry function, its closure read from the frame -===//
//
// The function the artifact serves may have free variables: a decorator's
// wrapper (`functools.wraps`) reads the function it wraps, and often a
// config, from cells of its closure, and those cells can be rebound after
// export (`wrapper.__closure__[0].cell_contents = other`, a `nonlocal`
// assignment in the enclosing function). The frame's free variables are its
// last localsplus slots; the guards read them as `L['name']` (the frame hook
// fills them from the function's closure before COPY_FREE_VARS runs), and
// the rewritten code reads them with LOAD_DEREF. So what each cell holds is
// guarded like an argument: a function by its code, a constant by value, a
// tensor as a graph input, a config object by its type and the attributes
// read from it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/Value.h"

#include "llvm/Support/Error.h"

#include <Python.h>

namespace dync::capture {

class ValueBuilder;

/// \p function, the entry, as a value whose closure cells' contents carry
/// the sources `L['<free variable>']`.
llvm::Expected<ValuePtr> wrapEntryFunction(ValueBuilder& values, PyObject* function);

} // namespace dync::capture
