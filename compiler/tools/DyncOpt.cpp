//===- DyncOpt.cpp - Read, verify, transform and print graph IR -----------===//
//
// The graph IR's test driver, in the mould of mlir-opt: it reads `.dync`
// text, verifies it, runs the requested passes (verifying after each), and
// prints the result in canonical form. Lit tests drive every IR feature and
// every pass through it. `--pipeline=export-O1` runs exactly what
// `dync export` runs on each graph it captures (the registry of passes and
// pipelines is passes/Pipeline.h), with codegen deciding which
// kernels it can lower, so an exported graph can be replayed here.
//
//===----------------------------------------------------------------------===//
#include "codegen/KernelCodegen.h"
#include "ir/Parser.h"
#include "ir/Verifier.h"
#include "passes/Pipeline.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace dync::ir;
using namespace dync::transforms;

namespace {

llvm::cl::OptionCategory category("dync-opt options");

llvm::cl::opt<std::string> inputFile(llvm::cl::Positional, llvm::cl::desc("<input .dync file>"),
                                     llvm::cl::init("-"), llvm::cl::cat(category));

llvm::cl::opt<std::string> outputFile("o",
                                      llvm::cl::desc("Write the output to <file> ('-' for "
                                                     "stdout, the default)"),
                                      llvm::cl::value_desc("file"), llvm::cl::init("-"),
                                      llvm::cl::cat(category));

llvm::cl::opt<bool> verifyOnly("verify-only",
                               llvm::cl::desc("Parse and verify only; print nothing on success"),
                               llvm::cl::cat(category));

llvm::cl::list<std::string> passNames("pass",
                                      llvm::cl::desc("Passes to run, in order, comma-separated "
                                                     "(see --list-passes); a pipeline's name "
                                                     "runs that pipeline"),
                                      llvm::cl::value_desc("name,..."), llvm::cl::CommaSeparated,
                                      llvm::cl::cat(category));

llvm::cl::opt<std::string>
    pipelineName("pipeline",
                 llvm::cl::desc("Run a named pipeline on every graph, after the --pass ones "
                                "(see --list-passes); export-O1 is what 'dync export' runs"),
                 llvm::cl::value_desc("name"), llvm::cl::cat(category));

llvm::cl::opt<bool> listPasses("list-passes",
                               llvm::cl::desc("List the available passes and pipelines and exit"),
                               llvm::cl::cat(category));

constexpr const char* overview =
    "dync graph IR driver\n\n"
    "Reads graph IR text (a .dync file, or stdin for '-'), verifies it, runs the\n"
    "passes named with --pass, verifying after each, and prints the result in\n"
    "canonical form. Printing canonical text and parsing it again gives the same\n"
    "text, byte for byte. Parse and verification errors are printed as\n"
    "file:line:col diagnostics and make the exit status 1; nothing is written\n"
    "to -o then. The text form is described in docs/graph-ir.md.\n\n"
    "Examples:\n"
    "  dync-opt model.dync                  print model.dync canonically\n"
    "  dync-opt --verify-only model.dync    check it; silent if it is valid\n"
    "  dync-opt model.dync -o out.dync      write the canonical form to out.dync\n"
    "  cat model.dync | dync-opt -          read from stdin\n"
    "  dync-opt --pipeline=export-O1 g.dync what 'dync export' does to g.dync\n";

/// What the passes ask of codegen: which kernels it can lower.
PassOptions codegenPassOptions() {
  PassOptions options;
  options.checkKernel = dync::codegen::checkKernel;
  return options;
}

/// A pass or a pipeline, as --pass names them.
struct Step {
  const PassInfo* pass = nullptr;
  const PipelineInfo* pipeline = nullptr;
  llvm::StringRef name() const { return pass ? pass->name : pipeline->name; }
};

/// Runs \p step on every entry graph of \p module (by index: fusion adds
/// kernels to the module as it goes).
llvm::Error runStep(const Step& step, Module& module, const PassOptions& options) {
  for (size_t i = 0; i < module.graphs().size(); ++i) {
    Graph& graph = *module.graphs()[i];
    if (llvm::Error error = step.pass ? step.pass->run(module, graph, options)
                                      : runPipeline(*step.pipeline, module, graph, options))
      return error;
  }
  return llvm::Error::success();
}

} // namespace

int main(int argc, char** argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(argc, argv, overview);

  if (listPasses) {
    for (const PassInfo& pass : registeredPasses())
      llvm::outs() << "  " << pass.name << " - " << pass.description << '\n';
    llvm::outs() << "pipelines:\n";
    for (const PipelineInfo& pipeline : registeredPipelines()) {
      llvm::outs() << "  " << pipeline.name << " - " << pipeline.description << "\n   ";
      for (llvm::StringRef pass : pipeline.passes)
        llvm::outs() << ' ' << pass;
      llvm::outs() << '\n';
    }
    return 0;
  }

  llvm::SmallVector<Step> steps;
  for (const std::string& name : passNames) {
    Step step{findPass(name), findPipeline(name)};
    if (!step.pass && !step.pipeline) {
      llvm::errs() << "dync-opt: error: unknown pass '" << name << "' (see --list-passes)\n";
      return 1;
    }
    steps.push_back(step);
  }
  if (!pipelineName.empty()) {
    const PipelineInfo* pipeline = findPipeline(pipelineName);
    if (!pipeline) {
      llvm::errs() << "dync-opt: error: unknown pipeline '" << pipelineName
                   << "' (see --list-passes)\n";
      return 1;
    }
    steps.push_back({nullptr, pipeline});
  }

  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFileOrSTDIN(inputFile, /*IsText=*/true);
  if (std::error_code ec = buffer.getError()) {
    llvm::errs() << "dync-opt: error: cannot read '" << inputFile << "': " << ec.message() << '\n';
    return 1;
  }
  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());

  Context ctx;
  auto report = [](llvm::Error error) {
    llvm::errs() << llvm::toString(std::move(error)) << '\n';
    return 1;
  };
  llvm::Expected<std::unique_ptr<Module>> module = parseModule(sm, ctx);
  if (!module)
    return report(module.takeError());
  if (llvm::Error error = verify(**module, &sm))
    return report(std::move(error));

  PassOptions passOptions = codegenPassOptions();
  for (const Step& step : steps) {
    if (llvm::Error error = runStep(step, **module, passOptions))
      return report(std::move(error));
    // Nodes a pass creates have no location; diagnostics then name the node.
    if (llvm::Error error = verify(**module, &sm)) {
      llvm::errs() << "dync-opt: error: the graph does not verify after pass '" << step.name()
                   << "'\n";
      return report(std::move(error));
    }
  }
  if (verifyOnly)
    return 0;

  // Print to memory first so a failure cannot leave a partial output file.
  std::string text;
  llvm::raw_string_ostream os(text);
  (*module)->print(os);

  std::error_code ec;
  llvm::ToolOutputFile output(outputFile, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    llvm::errs() << "dync-opt: error: cannot write '" << outputFile << "': " << ec.message()
                 << '\n';
    return 1;
  }
  output.os() << text;
  output.os().flush();
  if (output.os().has_error()) {
    llvm::errs() << "dync-opt: error: writing '" << outputFile << "' failed\n";
    output.os().clear_error();
    return 1;
  }
  output.keep();
  return 0;
}
