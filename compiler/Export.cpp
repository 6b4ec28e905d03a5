//===- Export.cpp - The export pipeline as a library ----------------------===//
//
// Captures each entry as graphs with their guards, in one interpreter, runs
// the pass pipeline, and writes the artifact (-o); see Export.h.
//
//===----------------------------------------------------------------------===//
#include "compiler/Export.h"
#include "compiler/ArtifactExport.h"
#include "compiler/EntryExport.h"
#include "compiler/PhaseTimes.h"
#include "compiler/UsageError.h"

#include "frontend/capture/Capture.h"
#include "frontend/embedding/EmbeddedPython.h"
#include "frontend/embedding/InterpreterProbe.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

namespace dync::compiler {

char UsageError::ID = 0;

ExportCompiler::ExportCompiler(ExportOptions options) : options_(std::move(options)) {}

ExportCompiler::~ExportCompiler() {
  // Python objects and graphs go before the interpreter is finalized.
  exported_.clear();
  graphs_.reset();
  context_.reset();
  python_.reset();
}

llvm::Error ExportCompiler::startPython() {
  PhaseTimes::Scope startup(*options_.artifact.times, "python");
  llvm::Expected<python::InterpreterInfo> interpreter = python::findInterpreter();
  if (!interpreter)
    return interpreter.takeError();
  llvm::Expected<std::unique_ptr<python::EmbeddedPython>> python =
      python::EmbeddedPython::start(*interpreter, {options_.entries.front().path});
  if (!python)
    return python.takeError();
  python_ = std::move(*python);
  context_ = std::make_unique<ir::Context>();
  graphs_ = std::make_unique<ir::Module>(*context_);
  return llvm::Error::success();
}

llvm::Error ExportCompiler::run(llvm::Error& failed) {
  llvm::Error failures = llvm::Error::success();
  // The graphs and Python objects live as long as the compiler: the driver
  // prints them after run().
  EntryExportContext shared{
      options_,
      *python_,
      *context_,
      *graphs_,
      exported_,
      // The passes run for what compiles or shows the optimized graph; the
      // graph they start from is decomposed for fusion unless asked
      // otherwise.
      options_.optLevel > 0 && (!options_.artifact.outputPath.empty() || options_.emit == "llvm" ||
                                options_.emit == "optimized-graph"),
      !options_.decompose.empty() ? options_.decompose
      : options_.optLevel > 0     ? "fusion"
                                  : "core",
      !options_.artifact.outputPath.empty() || options_.emit == "llvm",
  };
  for (const auto& [index, spec] : llvm::enumerate(options_.entries)) {
    if (llvm::Error error = EntryExport(shared, index, spec).run()) {
      if (!options_.artifact.keepGoing)
        return error;
      failures = llvm::joinErrors(std::move(failures), std::move(error));
    }
  }
  if (shared.buildArtifact)
    if (llvm::Error error = writeExported(failures))
      return error;
  failed = std::move(failures);
  return llvm::Error::success();
}

llvm::Error ExportCompiler::writeExported(llvm::Error& failures) {
  if (exported_.empty()) {
    failures = llvm::joinErrors(
        std::move(failures),
        llvm::createStringError("no entry was captured; " +
                                (options_.artifact.outputPath.empty()
                                     ? std::string("no LLVM IR to print")
                                     : options_.artifact.outputPath + " was not written")));
    return llvm::Error::success();
  }
  // One artifact holds the entries of one source file: the runtime checks
  // that file's hash and finds the entries in its module.
  std::vector<CapturedEntry> captured;
  for (const ExportedGraph& entry : exported_) {
    if (entry.sourcePath != exported_.front().sourcePath)
      return llvm::make_error<UsageError>("-o writes the entries of one file, but " + entry.spec +
                                          " is not in " + exported_.front().sourcePath +
                                          "; export each file to its own library");
    CapturedEntry& added = captured.emplace_back();
    added.graph = entry.graph;
    added.code = entry.code;
    added.function = entry.function;
    added.boundPath = entry.boundPath;
    for (const capture::FunctionRun& run : entry.functionsRun)
      added.functionsRun.push_back({run.code, run.globals, run.qualname});
  }
  ArtifactRequest request = options_.artifact;
  request.llvmIR = options_.emit == "llvm" ? &llvm::outs() : nullptr;
  llvm::Error skipped = llvm::Error::success();
  if (llvm::Error error = writeArtifact(captured, exported_.front().sourcePath, request, skipped)) {
    llvm::consumeError(std::move(skipped));
    return llvm::joinErrors(std::move(failures), std::move(error));
  }
  failures = llvm::joinErrors(std::move(failures), std::move(skipped));
  return llvm::Error::success();
}

} // namespace dync::compiler
