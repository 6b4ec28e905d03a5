//===- NamedObjects.h - Objects the rewritten code imports by name -------===//
//
// A value the program hands to a call made after the graph (a warning's
// category, `warnings.warn(msg, FutureWarning)`), assigns to an attribute
// or returns may be an object that lives in a module under a stable name:
// a class, a function, an enum member, a module. The rewritten code cannot
// make such an object, but it can find it again where the program found
// it, by its module and qualified name (ir::Argument::Kind::Named).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Argument.h"

#include "llvm/Support/Error.h"

#include <Python.h>

#include <optional>

namespace dync::capture {

/// \p object as an object imported by name: nullopt when it is not a
/// class, a function (Python or built-in), an enum member or a module; an
/// error when it is one but its module and qualified name do not lead back
/// to this very object (a class defined inside a function, a function
/// replaced on its module since).
llvm::Expected<std::optional<ir::Argument>> namedArgument(PyObject* object);

} // namespace dync::capture
