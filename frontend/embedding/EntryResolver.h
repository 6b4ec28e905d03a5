//===- EntryResolver.h - From "Model.forward" to a code object ------------===//
#pragma once

#include "frontend/embedding/ModuleLoader.h"
#include "frontend/embedding/PyRef.h"

#include "llvm/Support/Error.h"

#include <Python.h>

#include <string>

namespace dync::python {

/// How the entry was reached; it decides what the compiled function's first
/// argument is.
enum class EntryKind {
  /// A plain function: `f`, or a function stored on some object.
  Function,
  /// A function defined in a class, named through the class:
  /// `Model.forward`. Its first argument is the instance, given at call time.
  Method,
  /// A staticmethod: `Model.build`.
  StaticMethod,
  /// A classmethod: `Model.create`; bound to the class.
  ClassMethod,
  /// A method named through a module-level object: `net.forward`,
  /// `net.encoder.forward`; bound to that object.
  BoundMethod,
};

struct ResolvedEntry {
  EntryKind kind = EntryKind::Function;
  /// The qualname as written: "Model.forward".
  std::string qualname;
  /// The part before the last dot ("Model", "net.encoder"); empty for a
  /// module-level function.
  std::string ownerPath;
  /// For methods, the class's qualified name; for a bound method, the class
  /// of the instance.
  std::string className;
  /// For a method inherited from a base class, that base's qualified name.
  std::string definingClassName;
  /// The Python function whose bytecode is compiled (a bound method's
  /// __func__).
  PyRef function;
  /// Its code object.
  PyRef code;
  /// The instance a BoundMethod is bound to, or the class of a ClassMethod;
  /// null otherwise.
  PyRef self;

  PyCodeObject* codeObject() const { return reinterpret_cast<PyCodeObject*>(code.get()); }
  /// "function", "method of class Model", "bound method of 'net', an
  /// instance of Net", ...
  std::string describe() const;
};

/// Resolves \p qualname in \p module one attribute at a time. A missing
/// step is reported with the part that did resolve and the closest names
/// there; something that is not a Python function (a class, a constant, a
/// builtin) says what it is instead. Errors point into the module's file
/// (with the line when it is known). GIL held.
llvm::Expected<ResolvedEntry> resolveEntry(const LoadedModule& module, llvm::StringRef qualname);

} // namespace dync::python
