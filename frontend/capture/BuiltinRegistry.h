//===- BuiltinRegistry.h - The builtins capture implements ----------------===//
//
// Capture runs some Python callables itself over symbolic values rather than
// inlining their bytecode or asking the tensor oracle: CPython's builtins
// (len, isinstance, dict, ...), the methods of the containers it models, and
// a few of torch's and the standard library's functions. Each is a handler
// registered here by the real object; a value of kind Builtin names one.
//
// Registration is the registry's only way in: the files that implement
// handlers add them through add() and never reach the interpreter's state.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/Value.h"
#include "frontend/embedding/PyRef.h"

#include "llvm/Support/Error.h"

#include <Python.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace dync::capture {

class BuiltinContext;

/// Keyword arguments in call order.
using KeywordArgs = std::vector<std::pair<std::string, ValuePtr>>;

/// A handler for a builtin callable capture implements over symbolic values.
using BuiltinHandler = llvm::Expected<ValuePtr> (*)(BuiltinContext&, const ValuePtr& self,
                                                    std::vector<ValuePtr>& args,
                                                    KeywordArgs& kwargs);

class BuiltinRegistry {
public:
  /// Registers \p handler for \p object (kept alive); a method descriptor is
  /// also found by its C method definition (see methodDescriptor).
  void add(PyObject* object, BuiltinHandler handler);
  /// Whether \p object has a handler.
  bool contains(PyObject* object) const { return handlers_.count(object) != 0; }
  /// The handler of \p object, null when it has none.
  BuiltinHandler find(PyObject* object) const;
  /// The registered method descriptor whose C method definition is \p def,
  /// which a method bound to a real object shares; null when none is.
  PyObject* methodDescriptor(const PyMethodDef* def) const;

private:
  /// Handlers by the builtin object; the PyRef keeps it alive.
  std::map<PyObject*, std::pair<python::PyRef, BuiltinHandler>> handlers_;
  /// The method descriptors among them, by their C method definition.
  std::map<const PyMethodDef*, PyObject*> methodDefs_;
};

} // namespace dync::capture
