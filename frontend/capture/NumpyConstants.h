//===- NumpyConstants.h - NumPy arrays and scalars made from constants -*- C++ -*-===//
//
// Library code plans with NumPy (block tables, index plans, lengths) before
// it turns the plan into a tensor. An array a NumPy function made from
// constants while capturing is a constant: a fresh real object no input
// reaches. Its items and arithmetic are computed in NumPy. A NumPy scalar
// (np.float64, np.int64, np.bool_, ...) such a computation gives is a
// constant of its own NumPy type: immutable, so its methods and its
// arithmetic run in NumPy and give what NumPy gives (`np.float64(2.0) * 3`
// is an np.float64), and torch reads it where the program passes it as
// torch reads it in eager mode.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/Value.h"
#include "frontend/embedding/PyRef.h"

#include <optional>
#include <string>

namespace dync::capture {

/// Whether \p value is a NumPy array made while capturing (a real object
/// with no source).
bool isConstantArray(const ValuePtr& value);

/// Whether \p object is a NumPy scalar of a number or bool type (any
/// subclass of numpy.number, and numpy.bool_): immutable values that hold
/// no memory of another object's (unlike numpy.void) and no Python object
/// (unlike numpy.object_).
bool isNumpyScalar(PyObject* object);

/// Whether calling \p callable computes on a NumPy scalar and nothing else:
/// a method of a NumPy scalar type, bound to one or read from its type.
/// Every method NumPy's scalar types have qualifies but those that write a
/// file (what numpy.generic's own table names `dump` and `tofile`), whose
/// refusal nonPureNumpyScalarMethod gives.
bool isPureNumpyScalarMethod(PyObject* callable);

/// Why calling \p callable, a method of a NumPy scalar, cannot run while
/// capturing; nullopt when it can or it is no such method.
std::optional<std::string> nonPureNumpyScalarMethod(PyObject* callable);

} // namespace dync::capture
