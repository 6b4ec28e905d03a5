//===- TensorNumbers.h - float(), bool() and int() of computed values -----===//
//
// `float(t)`, `bool(t)` and `int(t)` of a one-element tensor, and float()
// or bool() of a number computed from tensor data, without deciding it: the
// result is a graph value (docs/capture.md, "Data-dependent floats and
// bools"). A branch on it is still refused where the program takes it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/BuiltinContext.h"

namespace dync::capture {

/// The number \p type (Python's float, bool or int, or the builtin abs)
/// makes of \p value, when \p value is a tensor or a number computed from
/// tensor data; null for any other value, which the builtin converts as
/// CPython does.
llvm::Expected<ValuePtr> numberFromData(BuiltinContext& interp, PyObject* type,
                                        const ValuePtr& value);

} // namespace dync::capture
