//===- ArtifactExport.h - Captured entries to a shared library ------------===//
//
// The last step of `dync export -o`: rewrites each captured entry's bytecode,
// reads the operator schemas and versions from the running torch and
// interpreter, and hands everything to codegen as plain data to build and
// link the artifact. The output appears under its name only when complete.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/TargetSpec.h"
#include "compiler/PhaseTimes.h"
#include "frontend/embedding/PyRef.h"
#include "ir/Graph.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace dync::compiler {

/// One captured function: its graph (with guards) and the code it replaces.
struct CapturedEntry {
  const ir::Graph* graph = nullptr;
  /// The entry function's code object.
  python::PyRef code;

  // ---- code identity ----
  /// The entry function, for its __module__.
  python::PyRef function;
  /// For a method named through an object of the exported file
  /// (`model.forward`), that path; empty for other entries.
  std::string boundPath;
  /// Every Python function whose code capture ran, as
  /// capture::FunctionRun has it (code, globals, __qualname__),
  /// fingerprinted into the artifact.
  struct FunctionRun {
    python::PyRef code;
    python::PyRef globals;
    std::string qualname;
  };
  std::vector<FunctionRun> functionsRun;
};

/// What to build and how; the defaults build for this machine with the
/// object cache on.
struct ArtifactRequest {
  /// The shared library to write; empty for none.
  std::string outputPath;
  /// Where --emit=llvm prints each module's IR after optimization; null for
  /// none.
  llvm::raw_ostream* llvmIR = nullptr;
  /// What to compile for (codegen::resolveTarget of --target-cpu); an
  /// empty triple means this machine.
  codegen::TargetSpec target;
  /// Threads compiling modules; 0 is one per core.
  unsigned jobs = 0;
  bool useCache = true;
  bool keepGoing = false;
  /// --verbose: where to say what was compiled and what came from the
  /// cache; null for quiet.
  llvm::raw_ostream* log = nullptr;
  /// Receives the time of each step (codegen, compile, link).
  PhaseTimes* times = nullptr;
};

/// Builds the artifact for \p entries, all captured from \p sourcePath
/// (absolute), as \p request says. An entry whose bytecode cannot be
/// rewritten or whose graph or guards cannot be compiled is an error naming
/// it; with request.keepGoing such entries are left out instead, their
/// errors joined into \p skipped, and the artifact holds the rest (an error
/// if none is left). GIL held.
llvm::Error writeArtifact(llvm::ArrayRef<CapturedEntry> entries, llvm::StringRef sourcePath,
                          const ArtifactRequest& request, llvm::Error& skipped);

} // namespace dync::compiler
