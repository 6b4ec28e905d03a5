//===- ArtifactExport.h - Captured entries to a shared library ------------===//
//
// The last step of `dync export -o`: rewrites each captured entry's bytecode,
// reads the operator schemas and versions from the running torch and
// interpreter, and hands everything to codegen as plain data to build and
// link the artifact. The output appears under its name only when complete.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/python/PyRef.h"
#include "passes/ir/Graph.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace dync::driver {

/// One captured function: its graph (with guards) and the code it replaces.
struct CapturedEntry {
  const ir::Graph* graph = nullptr;
  /// The entry function's code object.
  python::PyRef code;
};

/// Writes the artifact for \p entries, all captured from \p sourcePath
/// (absolute), to \p outputPath. An entry whose bytecode cannot be rewritten
/// or whose graph or guards cannot be compiled is an error naming it; with
/// \p keepGoing such entries are left out instead, their errors joined into
/// \p skipped, and the artifact holds the rest (an error if none is left).
/// GIL held.
llvm::Error writeArtifact(llvm::ArrayRef<CapturedEntry> entries, llvm::StringRef sourcePath,
                          llvm::StringRef outputPath, bool keepGoing, llvm::Error& skipped);

} // namespace dync::driver
