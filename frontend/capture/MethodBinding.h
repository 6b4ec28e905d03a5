//===- MethodBinding.h - Binding a function to an object --------*- C++ -*-===//
//
// `func.__get__(obj, cls)` (what functools.singledispatchmethod and
// monkey-patched forwards do) and `types.MethodType(func, obj)`: a bound
// method of the function and the object, as Python binds it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/Value.h"

#include "llvm/Support/Error.h"

namespace dync::capture {

class BuiltinContext;

/// function.__get__, the descriptor slot of every Python function, bound
/// to \p function: what reading `function.__get__` gives.
ValuePtr functionGetMethod(const ValuePtr& function);

llvm::Error registerMethodBindingHandlers(BuiltinContext& interp);

} // namespace dync::capture
