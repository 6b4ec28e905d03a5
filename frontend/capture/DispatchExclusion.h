//===- DispatchExclusion.h - Blocks that switch off torch's dispatch modes ===//
//
// `torch._C._DisableTorchDispatch()` (torch.utils._mode_utils.no_dispatch)
// and `torch._C._DisableFuncTorch()` switch off the Python dispatch keys
// (dispatch modes, tensor subclasses) and functorch's transforms for as long
// as the object lives (their `with` methods do nothing);
// `torch._C.DisableTorchFunctionSubclass()` and `DisableTorchFunction()`
// switch off `__torch_function__` (of subclasses, and of modes too) inside
// their `with` block (record_function's exit opens one). A served call runs
// with none of these active: its guards require plain tensors and empty
// mode stacks, and capture refuses torch.func's transforms. So in the program's
// eager run such an object changes nothing, and capture gives the program a
// stand-in instead of making one for real, which would switch off the fake
// tensors capture computes with: `with` on the stand-in enters and leaves
// without doing anything.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/embedding/PyRef.h"

#include "llvm/Support/Error.h"

#include <Python.h>

namespace dync::capture {

/// Whether \p cls is one of those two classes.
bool isDispatchExclusionClass(PyObject* cls);

/// The object capture gives the program for a call of one of them.
llvm::Expected<python::PyRef> makeDispatchExclusionStandIn();

/// Whether \p object is such a stand-in.
bool isDispatchExclusionStandIn(PyObject* object);

/// The `__exit__` `with` gets for a stand-in: a function capture calls by
/// identity (isDispatchExclusionExit), which does nothing.
llvm::Expected<python::PyRef> dispatchExclusionExit();

/// Whether \p object is that function.
bool isDispatchExclusionExit(PyObject* object);

} // namespace dync::capture
