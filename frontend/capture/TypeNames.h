//===- TypeNames.h - The type a message names for a value -------*- C++ -*-===//
//
// What an error about an operand calls its type: the Python type's
// qualified name where the value holds a real object, else the spelling of
// its kind (`list`, `tensor`, ...).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/PythonHelpers.h"
#include "frontend/capture/Value.h"

#include <string>

namespace dync::capture {

inline std::string typeNameOf(const ValuePtr& value) {
  if (value->object && (value->kind == ValueKind::Constant || value->kind == ValueKind::Object ||
                        value->kind == ValueKind::NNModule))
    return qualifiedTypeName(reinterpret_cast<PyObject*>(Py_TYPE(value->object.get())));
  return spelling(value->kind).str();
}

} // namespace dync::capture
