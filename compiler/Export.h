//===- Export.h - The export pipeline as a library -------------*- C++ -*-===//
//
// What `dync export` does, without its command line: start the embedded
// interpreter, import each entry's module, capture the entry in each grad
// mode variant (and at each size a declared range needs a graph for), run
// the pass pipeline the optimization level names (passes/Pipeline.h:
// export-O1 folds, fuses and plans memory, then gives kernels codegen
// cannot lower back as ATen calls), rewrite the bytecode, generate
// code and write the artifact. The driver parses options into ExportOptions
// and prints what exported() and graphs() hold; nothing here prints but
// notes and --verbose logs on stderr.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/ArtifactExport.h"
#include "compiler/PhaseTimes.h"
#include "frontend/capture/Capture.h"
#include "frontend/embedding/EmbeddedPython.h"
#include "frontend/embedding/EntrySpec.h"
#include "frontend/embedding/PyRef.h"
#include "ir/Graph.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace dync::compiler {

/// What to export and how; filled from `dync export`'s options.
struct ExportOptions {
  /// The entries, parsed and with their files checked; at least one.
  std::vector<python::EntrySpec> entries;
  /// Capture's options for every entry (--init, --example NAME, --dynamic).
  capture::CaptureOptions capture;
  /// --example QUALNAME=NAME: an entry's own example function.
  std::map<std::string, std::string> entryExamples;
  /// What the caller will show (--emit's kind, or empty): it decides what is
  /// kept of each entry (the captured graph's text, the rewritten bytecode's
  /// listing or marshalled code) and whether the pipeline runs without -o.
  std::string emit;
  /// 0 runs no pass; 1 runs export-O1.
  int optLevel = 1;
  /// Which decompositions capture applies (core, fusion); empty: fusion,
  /// or core at -O0.
  std::string decompose;
  /// Where a declared range is not served by one graph, an error instead of
  /// a graph for the sizes left out.
  bool strictDynamic = false;
  /// How many times each entry is captured for the sizes of its declared
  /// ranges, the examples' capture included (--max-graphs): each capture
  /// gives the entry's variants at one point of the ranges. Sizes left out
  /// once it is reached run the original code, and export names them.
  size_t maxGraphs = 16;
  /// How the artifact is built and where it goes: -o (outputPath, empty for
  /// none), --target-cpu, -j, --no-cache and --keep-going, which also lets
  /// the other entries go on when one fails. Its log (--verbose: also why
  /// kernels run as ATen calls) and times (required) serve the whole
  /// export; its llvmIR is set from emit.
  ArtifactRequest artifact;
};

/// One graph the export made: an entry's variant, with what was kept of it
/// for printing.
struct ExportedGraph {
  /// The entry as given on the command line.
  std::string spec;
  /// The graph, with the guards it was captured under.
  const ir::Graph* graph;
  /// --emit=graph's text, --emit=bytecode's listing or --emit=code's bytes.
  std::string rewritten;
  /// The entry's code object and file, for -o.
  python::PyRef code;
  std::string sourcePath;
  /// Whether --emit shows it: the first variant of each entry.
  bool shown = true;
  /// The entry function and what its capture ran, for the artifact's
  /// code identity.
  python::PyRef function;
  std::vector<capture::FunctionRun> functionsRun;
  /// The captured graph's rangeFreeText, for merging equal graphs of a
  /// split range; empty when not exported to an artifact.
  std::string rangeFree = {};
  /// The sizes of the declared ranges it was captured at (empty: the
  /// examples'), and its variant's name suffix (``, `$grad`, `$frozen`).
  std::map<std::string, int64_t> sizePoint = {};
  std::string variant = {};
  /// For a method named through an object of the exported file
  /// (`model.forward`), that path; empty for other entries.
  std::string boundPath = {};
};

/// One export, in the mould of clang's CompilerInstance: it owns the
/// interpreter, the graphs and what each entry produced, and destroys them
/// in that order's reverse, so Python objects go before the interpreter is
/// finalized.
class ExportCompiler {
public:
  explicit ExportCompiler(ExportOptions options);
  ~ExportCompiler();

  /// Chooses and starts the interpreter (the "python" phase).
  llvm::Error startPython();
  /// The running interpreter; after startPython() succeeded.
  python::EmbeddedPython& python() { return *python_; }

  /// Exports every entry: capture, passes, rewrite, and with -o (or
  /// --emit=llvm) codegen and the artifact. The errors of entries that
  /// failed are joined into \p failed (with keepGoing: the others were
  /// still exported); a returned error stops the export. GIL held.
  llvm::Error run(llvm::Error& failed);

  /// What run() made, in order: a failed entry leaves nothing here.
  llvm::ArrayRef<ExportedGraph> exported() const { return exported_; }
  /// The module holding every graph and kernel.
  const ir::Module& graphs() const { return *graphs_; }

private:
  /// Writes the artifact (-o, or --emit=llvm's IR) from what run()
  /// exported. The entries it skips join \p failures, as does having
  /// nothing to write; a returned error stops the export.
  llvm::Error writeExported(llvm::Error& failures);

  ExportOptions options_;
  std::unique_ptr<python::EmbeddedPython> python_;
  std::unique_ptr<ir::Context> context_;
  std::unique_ptr<ir::Module> graphs_;
  std::vector<ExportedGraph> exported_;
};

} // namespace dync::compiler
