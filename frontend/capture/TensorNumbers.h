//===- TensorNumbers.h - float(), bool() and int() of computed values -----===//
//
// `float(t)`, `bool(t)` and `int(t)` of a one-element tensor, and float()
// or bool() of a number computed from tensor data (and int(), round() and
// the math module's functions of one), without deciding it: the
// result is a graph value (docs/capture.md, "Data-dependent floats and
// bools"). A branch on it is still refused where the program takes it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/BuiltinContext.h"

namespace dync::capture {

/// A function of the oracle's module for numbers made from tensor data
/// (embedded oracle_scalars.py), which the oracle has imported.
llvm::Expected<python::PyRef> scalarsFunction(const char* name);

/// Whether \p value is a number computed from tensor data: a float or bool
/// a node computes, or an int over data-dependent symbols (item()'s `u0`).
llvm::Expected<bool> isDataNumber(oracle::TensorOracle& oracle, const ValuePtr& value);

/// The number \p type (Python's float, bool or int, or the builtin abs)
/// makes of \p value, when \p value is a tensor or a number computed from
/// tensor data; null for any other value, which the builtin converts as
/// CPython does.
llvm::Expected<ValuePtr> numberFromData(BuiltinContext& interp, PyObject* type,
                                        const ValuePtr& value);

/// `round(s)`, `pow(s, 2)`, `math.sqrt(s)`, `math.floor(s)`, ... of a number
/// computed from tensor data: the oracle records Python's operation as a
/// node (or refuses it, saying so at the program's line). Null when no
/// argument is such a number, for the builtin to run as it does.
llvm::Expected<ValuePtr> functionOfDataNumbers(BuiltinContext& interp, PyObject* function,
                                               const std::vector<ValuePtr>& args);

/// `divmod(a, b)` where an operand is a number computed from tensor data:
/// Python's `(a // b, a % b)` (CPython computes both parts by the one
/// function `//` and `%` use too, for floats and ints), each part a node or
/// a symbolic int. Null when no operand is such a number.
llvm::Expected<ValuePtr> divmodOfDataNumbers(BuiltinContext& interp,
                                             const std::vector<ValuePtr>& args);

} // namespace dync::capture
