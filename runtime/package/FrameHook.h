//===- FrameHook.h - The PEP 523 frame hook and what it serves -----------===//
//
// The hook sees every Python function call in the interpreter while at least
// one artifact is loaded. For a call of a code object some loaded entry
// replaces, it runs the entry's native guard on the new frame's fast locals
// and, on a hit, runs the entry's rewritten code in place of the original;
// every other frame, and every miss, runs as if the hook were not there.
//
// Everything here is touched only with the GIL held: the hook runs with it,
// and so do load and unload. The one thing shared without the GIL is a
// loaded library, which graph calls use while they let other threads run;
// it is reference counted and closed when its last user lets go.
//
//===----------------------------------------------------------------------===//

#ifndef DYNC_RUNTIME_PYTHON_FRAMEHOOK_H
#define DYNC_RUNTIME_PYTHON_FRAMEHOOK_H

#include <Python.h>

#include "runtime/artifact/Loader.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace dync::python {

/// One dlopen'ed artifact. Closed (dlclose) when the last Binding or graph
/// object that uses its functions is gone.
struct LoadedLibrary {
  std::unique_ptr<runtime::Artifact> artifact;
};

/// What dync.stats() reports for one entry.
struct EntryStats {
  uint64_t calls = 0;
  uint64_t hits = 0;
  uint64_t misses = 0;
  /// Miss count per failing guard, by the guard's own description.
  std::map<std::string, uint64_t> missReasons;
  std::string lastMissReason;
};

/// One entry of a loaded artifact, bound to the live code object it
/// replaces. Holds strong references; destroyed with the GIL held.
struct Binding {
  Binding() = default;
  Binding(const Binding&) = delete;
  Binding& operator=(const Binding&) = delete;
  ~Binding();

  /// One compiled version of the function: an artifact entry, and a
  /// function running its rewritten code with the original's globals,
  /// closure and defaults.
  struct Variant {
    const dync_artifact_entry* entry = nullptr;
    PyObject* rewrittenFunction = nullptr;
  };

  std::shared_ptr<LoadedLibrary> library;
  /// Tried in order on each call; the first whose guard holds runs. An
  /// artifact holds one entry per grad mode for most functions.
  std::vector<Variant> variants;
  std::string artifactPath;
  std::string qualifiedName;
  /// The original function's __code__: the key the hook looks frames up by.
  PyObject* originalCode = nullptr;
  /// The resolved original function.
  PyObject* function = nullptr;
  /// The function's globals, where the graph callables are bound by name.
  PyObject* globals = nullptr;
  std::vector<std::pair<PyObject*, PyObject*>> boundGlobals; // (name, graph)
  bool strict = false;
  EntryStats stats;
  /// Non-empty when the entry is not served because the code it was
  /// captured from changed (docs/runtime.md, "Code identity"): every call
  /// runs the original code and counts as a miss with this reason.
  std::string staleReason;
};

/// The exception a strict-mode guard miss raises (set by the module).
extern PyObject* GuardErrorType;
/// dync.FallBack: a graph's check of a bound capture inferred failed before
/// it did anything observable (DYNC_ARTIFACT_FALL_BACK); the hook runs the
/// original code.
extern PyObject* FallBackType;

/// A str attribute of a raised exception: `convert(value)`, which is
/// PyUnicode_FromString unless, for a path, PyUnicode_DecodeFSDefault.
struct ExceptionAttribute {
  const char* name;
  const char* value;
  PyObject* (*convert)(const char*) = PyUnicode_FromString;
};

/// Raises `type(message)` with the attributes `first` and `second` set. If
/// the exception or an attribute cannot be made, that error is raised
/// instead. Returns NULL.
PyObject* raiseWithAttributes(PyObject* type, const std::string& message,
                              const ExceptionAttribute& first, const ExceptionAttribute& second);

/// Makes the hook serve `binding`, installing the hook for the first one.
/// Fails, with an error kind and message, if another entry already serves
/// the same code object ("entry-in-use") or another frame evaluator, such as
/// TorchDynamo's, is active ("frame-hook-busy").
bool registerBinding(std::shared_ptr<Binding> binding, const char*& kind, std::string& error);

/// Stops serving `binding`; uninstalls the hook after the last one.
void unregisterBinding(const Binding& binding);

/// Every binding currently served, for stats().
std::vector<std::shared_ptr<Binding>> registeredBindings();

/// Whether the interpreter's frame evaluator is the hook.
bool hookInstalled();

} // namespace dync::python

#endif // DYNC_RUNTIME_PYTHON_FRAMEHOOK_H
