//===- ModuleLoader.h - Importing the user's file as a module -------------===//
#pragma once

#include "frontend/embedding/PyRef.h"

#include "llvm/Support/Error.h"

#include <string>

namespace dync::python {

/// The user's file, imported.
struct LoadedModule {
  /// The module name: the file's stem ("model" for "dir/model.py").
  std::string name;
  /// The file as the user named it, for messages.
  std::string displayPath;
  /// The absolute path the module was imported from (its __file__ and the
  /// co_filename of its code).
  std::string absolutePath;
  /// The module object, registered in sys.modules under `name`.
  PyRef module;
  /// The code object of the module body, for finding where things in it
  /// are defined.
  PyRef code;
};

/// Checks, before any interpreter exists, that \p path names a readable
/// regular file.
llvm::Error checkModuleFile(llvm::StringRef path);

/// Imports \p path as a module named after its stem, the way importlib
/// imports a file found on sys.path: the file's folder goes first on
/// sys.path, the module is in sys.modules while its body runs, and its
/// __name__ is the stem, so an `if __name__ == "__main__":` block does not
/// run. A file that Python has already imported under that name (a
/// standard-library module, say) is not run again; a different module of
/// that name is an error. A syntax error comes back as a SourceError; an
/// exception raised by the body as a PythonException with the user's
/// frames. GIL held.
llvm::Expected<LoadedModule> importModuleFromPath(llvm::StringRef path);

} // namespace dync::python
