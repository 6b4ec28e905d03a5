//===- OutputPath.h - Where `dync export -o` may write ---------*- C++ -*-===//
//
// `-o` replaces the file it names. Before anything is captured, export checks
// that the name is safe to write: a file already there must be an artifact an
// earlier export wrote (never the user's source or any other file), and the
// name must not make `import` load the artifact in place of a module of that
// folder (docs/cli.md, "Naming the artifact").
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace dync::driver {

/// The module name under which `import` finds a file named \p fileName as an
/// extension module ("model" for model.so, model.abi3.so or
/// model.cpython-311-x86_64-linux-gnu.so), or none: model.dync.so is not
/// importable, since `model.dync` is not a module name.
std::optional<std::string> importableModuleName(llvm::StringRef fileName);

/// Fails, naming \p output, if writing the artifact there would replace a
/// file that is not a dync artifact, or would shadow a module of its folder.
llvm::Error checkOutputPath(llvm::StringRef output);

} // namespace dync::driver
