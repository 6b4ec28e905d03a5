//===- ArtifactWriter.h - Graphs to a loadable dync artifact ---*- C++ -*-===//
//
// Builds the LLVM modules of an artifact: the main one (graph functions,
// init, guards and the descriptor of runtime/artifact/dync_artifact.h) and
// one per distinct kernel the graphs call. Each is compiled to an object on
// its own, in parallel, or taken from an on-disk cache, for the CPU the
// TargetSpec names; lld links the objects into a shared library. Everything codegen
// needs from the interpreter and torch (the bytecode magic number, torch's
// version, schemas, rewritten code) arrives as plain data: codegen never
// sees the frontend's Python objects.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/ObjectCache.h"
#include "codegen/OpSchemas.h"
#include "codegen/TargetSpec.h"
#include "ir/Graph.h"

#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Target/TargetMachine.h"

#include <array>
#include <cstdint>
#include <functional>
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

/// A Python function whose code capture ran, and the digest of that code
/// (dync_artifact_function; docs/artifact.md, "Code identity").
struct CodeFingerprint {
  std::string moduleName;
  std::string qualifiedName;
  std::string file;
  uint32_t firstLine = 0;
  /// SHA-256 of the code object, 64 lowercase hex digits.
  std::string codeSha256;
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

  // ---- code identity ----
  /// The entry function's module (its __module__) and defining file; empty
  /// when unknown.
  std::string moduleName;
  std::string definingFile;
  /// What capture ran for this entry, torch and the standard library left
  /// out.
  std::vector<CodeFingerprint> functions;
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

/// One module of an artifact, compiled to an object on its own so that
/// modules compile in parallel and each object can come from the cache.
struct ArtifactUnit {
  /// `main` for the module with the descriptor, init, guards and graph
  /// functions; a kernel's symbol for a kernel's module.
  std::string name;
  /// For a kernel, the name it has in the graph IR (`k0`), for messages.
  std::string kernelName;
  /// The ObjectCache key of its object.
  std::string cacheKey;
  /// Kernels get the full O3 pipeline with vectorization; the main module,
  /// calls through the shim table, is only lowered as before.
  bool optimize = false;
  bool optimized = false;
  /// Whether object was read from the cache rather than compiled.
  bool cached = false;
  /// Each module has a context of its own: contexts are not thread-safe.
  std::unique_ptr<llvm::LLVMContext> context;
  /// Null when the object came from the cache and nobody asked for the IR.
  std::unique_ptr<llvm::Module> module;
  std::unique_ptr<llvm::MemoryBuffer> object;
};

struct BuildOptions {
  TargetSpec target;
  /// Threads compiling modules; 0 means one per core.
  unsigned jobs = 0;
  /// Where compiled objects are kept; null disables the cache.
  const ObjectCache* cache = nullptr;
  /// Build every module even when the cache holds its object, so that it
  /// can be printed (`--emit=llvm`).
  bool needModules = false;
  /// The ld.lld executable; empty means the one found next to LLVM's tools
  /// at configure time.
  std::string linker;
};

/// What a build did, for `--verbose`.
struct BuildStats {
  unsigned compiled = 0;
  unsigned cached = 0;
  /// Cache entries that failed their check and were replaced.
  unsigned damaged = 0;
  /// Why the cache could not be written (the build itself succeeded).
  std::vector<std::string> cacheProblems;
};

/// Builds an artifact in steps, so that a caller can check entries (build
/// their modules, no backend), print the IR, and compile and link.
class ArtifactBuilder {
public:
  explicit ArtifactBuilder(BuildOptions options) : options_(std::move(options)) {}

  const BuildOptions& options() const { return options_; }
  const BuildStats& stats() const { return stats_; }

  /// The main module, then one module per distinct kernel the graphs call,
  /// in first-call order; verified, not optimized, no backend run. A module
  /// whose object the cache holds is not built (unless needModules).
  llvm::Expected<std::vector<ArtifactUnit>> buildModules(llvm::ArrayRef<ArtifactEntry> entries,
                                                         const ArtifactOptions& artifactOptions);
  /// One unit per distinct kernel of \p kernels (equal kernels share a
  /// symbol and so a unit), emitted unless the cache holds its object.
  llvm::Expected<std::vector<ArtifactUnit>>
  buildKernelUnits(llvm::ArrayRef<const ir::Graph*> kernels);
  /// Runs the optimization pipeline on the units that get one, in parallel.
  llvm::Error optimize(llvm::MutableArrayRef<ArtifactUnit> units);
  /// Optimizes (where not done yet) and compiles every unit without an
  /// object, in parallel, and stores the new objects in the cache.
  llvm::Error compile(llvm::MutableArrayRef<ArtifactUnit> units);
  /// Links the units' objects into a shared library at \p path and seals
  /// it (runtime/artifact/Seal.h); written under a temporary name and
  /// renamed into place.
  llvm::Error link(llvm::ArrayRef<ArtifactUnit> units, llvm::StringRef path);

private:
  /// Takes \p unit's object from the cache if it holds one.
  void lookUp(ArtifactUnit& unit);
  /// Runs \p work on each unit \p wanted selects, on options_.jobs threads;
  /// the errors are joined, each naming its unit.
  llvm::Error forEachInParallel(llvm::MutableArrayRef<ArtifactUnit> units,
                                llvm::function_ref<bool(const ArtifactUnit&)> wanted,
                                std::function<llvm::Error(ArtifactUnit&)> work);

  BuildOptions options_;
  BuildStats stats_;
};

/// Prints each unit's module, each preceded by a `; dync module: ...` line.
void printUnits(llvm::raw_ostream& os, llvm::ArrayRef<ArtifactUnit> units);

/// A TargetMachine for the host: its triple, CPU and features, PIC.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>> createHostTargetMachine();

/// The host features to record in the descriptor: those it has enabled that
/// the runtime can test with __builtin_cpu_supports, comma-separated.
std::string describeHostFeatures();

/// Builds the artifact's main module alone for \p tm (whose data layout
/// decides the descriptor's layout; it is checked against dync_artifact.h's).
/// For graphs that call no kernel this is the whole artifact.
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
