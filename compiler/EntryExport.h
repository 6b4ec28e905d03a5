//===- EntryExport.h - One entry's export -----------------------*- C++ -*-===//
//
// What ExportCompiler::run does for each entry it was given: import the
// entry's module, resolve the entry, run --warmup's calls, then capture the
// entry in each grad mode variant (and at each size a declared range needs
// a graph for), fold the sizes that are the same program, and optimize and
// record what is kept in the export's list of graphs. Or, without an
// artifact to build, the one capture --emit prints.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/Export.h"
#include "compiler/RangeSpecializations.h"
#include "frontend/capture/Capture.h"
#include "frontend/embedding/EmbeddedPython.h"
#include "frontend/embedding/EntryResolver.h"
#include "frontend/embedding/EntrySpec.h"
#include "frontend/embedding/ModuleLoader.h"
#include "ir/Graph.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dync::compiler {

/// What every entry's export shares: the export's options, its interpreter
/// and graphs, where the graphs made are recorded, and what the options
/// decide for all entries alike.
struct EntryExportContext {
  const ExportOptions& options;
  python::EmbeddedPython& python;
  ir::Context& context;
  ir::Module& graphs;
  /// What each entry that was captured produced, in order; a failed entry
  /// leaves nothing here, even if its graph got as far as a return.
  std::vector<ExportedGraph>& exported;
  /// The passes run for what compiles or shows the optimized graph.
  bool optimize;
  /// The decompositions the graph the passes start from was captured with.
  std::string decompose;
  /// Whether an artifact is built (-o or --emit=llvm).
  bool buildArtifact;
};

/// One entry's export: the state its variants share while they are
/// captured. Made and run once per entry.
class EntryExport {
public:
  EntryExport(const EntryExportContext& shared, size_t index, const python::EntrySpec& spec)
      : shared_(shared), options_(shared.options), index_(index), spec_(spec) {}

  /// Exports the entry: its variants go to the shared list of graphs. GIL
  /// held.
  llvm::Error run();

private:
  /// What a variant's graph does about autograd, which capture checks.
  enum class Autograd {
    /// Anything (what --emit shows of a plain capture).
    Any,
    /// Nothing it returns requires grad: it may be fused.
    None,
    /// As None, and no input requires grad whatever the real ones say.
    Frozen,
    /// Its ATen calls run one by one and autograd records them, in the
    /// grad mode of the capture: the program may not switch it over
    /// tensors that require grad.
    Records,
  };

  /// Imports the entry's module, resolves the entry and chooses its
  /// capture options.
  llvm::Error load();
  /// Runs --warmup's calls.
  llvm::Error warmUp();
  /// The variants of each size the declared ranges need a graph for, folded
  /// where they are the same program, then optimized.
  llvm::Error exportForArtifact();
  /// The one capture --emit prints.
  llvm::Error exportForEmit();

  llvm::Expected<ir::Graph*> captureVariant(bool gradEnabled, llvm::StringRef decomposition,
                                            llvm::StringRef nameSuffix, Autograd autograd,
                                            ir::Module* into = nullptr);
  llvm::Error optimizeVariant(ir::Graph& graph);
  llvm::Error finishVariant(ExportedGraph& made);
  llvm::Error addVariant(ir::Graph& graph, llvm::StringRef variant);
  std::optional<size_t> mergeRange(ir::Graph& graph, llvm::StringRef rangeFree);
  llvm::Expected<ir::Graph*> exportFamily();
  llvm::Expected<ir::Graph*> exportWithoutNoGrad(llvm::Error noGradError);
  llvm::Error addFrozenVariant();
  void notCompiled(llvm::StringRef calls, llvm::Error why);

  const EntryExportContext& shared_;
  const ExportOptions& options_;
  size_t index_;
  const python::EntrySpec& spec_;

  std::optional<python::LoadedModule> module_;
  std::optional<python::ResolvedEntry> entry_;
  capture::CaptureOptions entryOptions_;
  /// What each variant's capture ran, by graph, for the code identity.
  std::map<const ir::Graph*, std::vector<capture::FunctionRun>> functionsRun_;
  /// The sizes the variants being captured serve part of the declared
  /// ranges at (empty: the examples'); see RangeSpecializations.h.
  SizePoint sizePoint_;
  /// What --dynamic auto found, noted once the entry is exported.
  std::vector<std::string> autoReport_;
  /// Decisions on data specialized to the example, over every capture of
  /// the entry.
  std::vector<std::string> dataNotes_;
  /// Whether the next variant recorded is the entry's first, which --emit
  /// shows.
  bool first_ = true;
  /// Whether the last capture ran autograd's backward (torch.autograd.grad).
  bool runsBackward_ = false;
  /// Whether the last capture stopped at a result with autograd history
  /// in a variant for no_grad.
  bool refusedHistory_ = false;
  /// The range merges noted so far: once per entry, not per grad-mode
  /// variant.
  llvm::StringSet<> mergeNotes_;
};

} // namespace dync::compiler
