//===- EntrySession.h - The user's entry function, ready to compile -------===//
#pragma once

#include "driver/Command.h"

#include "frontend/embedding/EmbeddedPython.h"
#include "frontend/embedding/EntryResolver.h"
#include "frontend/embedding/EntrySpec.h"
#include "frontend/embedding/ModuleLoader.h"

#include "llvm/Support/Error.h"

#include <memory>

namespace dync::driver {

/// What every subcommand that compiles a function starts from: the running
/// interpreter, the user's module imported in it, and the entry resolved.
struct EntrySession {
  python::EntrySpec spec;
  // Declared before the Python objects so that it is destroyed after them:
  // destroying it finalizes the interpreter.
  std::unique_ptr<python::EmbeddedPython> python;
  python::LoadedModule module;
  python::ResolvedEntry entry;
};

/// Parses \p specText, checks the file, chooses and starts the interpreter,
/// imports the module and resolves the entry. A malformed spec is a usage
/// error. On success, whatever the module printed has been flushed.
llvm::Expected<std::unique_ptr<EntrySession>> openEntry(llvm::StringRef specText,
                                                        const GlobalOptions& options);

} // namespace dync::driver
