//===- NumpyConstants.h - NumPy arrays made from constants -------*- C++ -*-===//
//
// Library code plans with NumPy (block tables, index plans, lengths) before
// it turns the plan into a tensor. An array a NumPy function made from
// constants while capturing is a constant: a fresh real object no input
// reaches. Its items and arithmetic are computed in NumPy, and a NumPy
// scalar they give is the Python number it holds, as torch reads it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/Value.h"
#include "frontend/embedding/PyRef.h"

namespace dync::capture {

/// Whether \p value is a NumPy array made while capturing (a real object
/// with no source).
bool isConstantArray(const ValuePtr& value);

/// \p object, or the Python number it holds when it is a NumPy scalar;
/// null with the Python error set when reading it fails.
python::PyRef numberOfNumpyScalar(PyObject* object);

} // namespace dync::capture
