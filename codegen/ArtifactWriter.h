//===- ArtifactWriter.h - Graphs to a loadable dync artifact ---*- C++ -*-===//
//
// Builds the LLVM module of an artifact (graph functions, init, guards and
// the descriptor of runtime/artifact/dync_artifact.h), compiles it for the
// host CPU and links it into a shared library with lld. Everything codegen
// needs from the interpreter and torch (the bytecode magic number, torch's
// version, schemas, rewritten code) arrives as plain data: codegen never
// sees the frontend's Python objects.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/OpSchemas.h"
#include "passes/ir/Graph.h"

#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dync::codegen {

/// One graph of an entry: the IR and the global name the rewritten bytecode
/// calls it through.
struct ArtifactGraph {
  const ir::Graph* graph = nullptr;
  std::string name;
};

/// One captured function.
struct ArtifactEntry {
  std::string qualifiedName;
  uint32_t firstLine = 0;
  /// marshal.dumps() of the rewritten code object. Empty means the frontend
  /// supplied none: the entry then holds marshal.dumps(None), one byte `N`,
  /// because the descriptor format requires code bytes.
  std::vector<uint8_t> code;
  std::vector<ArtifactGraph> graphs;
};

struct ArtifactOptions {
  /// importlib.util.MAGIC_NUMBER of the interpreter the code is for.
  std::array<uint8_t, 4> pythonMagic{};
  /// torch.__version__ at export, e.g. `2.13.0+cpu`.
  std::string torchVersion;
  /// The exported file, absolute, and the SHA-256 of its bytes; both may be
  /// empty when there is no source file (the loader then checks nothing).
  std::string sourcePath;
  std::string sourceSha256;
  /// Where keyword arguments go; may be null when no graph has any.
  const OpSchemas* schemas = nullptr;
  /// The ld.lld executable; empty means the one found next to LLVM's tools
  /// at configure time.
  std::string linker;
};

/// A TargetMachine for the host: its triple, CPU and features, PIC.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>> createHostTargetMachine();

/// The host features to record in the descriptor: those it has enabled that
/// the runtime can test with __builtin_cpu_supports, comma-separated.
std::string describeHostFeatures();

/// Builds the artifact's module for \p tm (whose data layout decides the
/// descriptor's layout; it is checked against dync_artifact.h's).
llvm::Expected<std::unique_ptr<llvm::Module>>
buildArtifactModule(llvm::LLVMContext& ctx, llvm::TargetMachine& tm,
                    llvm::ArrayRef<ArtifactEntry> entries, const ArtifactOptions& options);

/// Writes \p module as LLVM IR text, an object file, or a linked shared
/// library to \p path. Each writes a temporary file in \p path's directory
/// and renames it into place at the end, so a failure never leaves a partial
/// file under \p path.
llvm::Error writeIR(const llvm::Module& module, llvm::StringRef path);
llvm::Error writeObject(llvm::Module& module, llvm::TargetMachine& tm, llvm::StringRef path);
llvm::Error writeSharedLibrary(llvm::Module& module, llvm::TargetMachine& tm, llvm::StringRef path,
                               const ArtifactOptions& options);

} // namespace dync::codegen
