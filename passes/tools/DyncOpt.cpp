//===- DyncOpt.cpp - Read, verify, transform and print graph IR -----------===//
//
// The graph IR's test driver, in the mould of mlir-opt: it reads `.dync`
// text, verifies it, runs the requested passes (verifying after each), and
// prints the result in canonical form. Lit tests drive every IR feature and
// every pass through it.
//
//===----------------------------------------------------------------------===//
#include "passes/ir/Parser.h"
#include "passes/ir/Verifier.h"
#include "passes/transforms/Fusion.h"
#include "passes/transforms/KernelInlining.h"
#include "passes/transforms/MemoryPlan.h"
#include "passes/transforms/Passes.h"
#include "passes/transforms/Pipeline.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace dync::ir;

namespace {

/// A transformation `--pass=NAME` can run. Passes register here as they are
/// written; each must leave a graph that still verifies.
struct PassInfo {
  llvm::StringLiteral name;
  llvm::StringLiteral description;
  llvm::Error (*run)(Module& module);
};

/// Runs \p pass on every entry graph of \p module.
template <llvm::Error (*pass)(Graph&)> llvm::Error onEachGraph(Module& module) {
  for (const std::unique_ptr<Graph>& graph : module.graphs())
    if (llvm::Error error = pass(*graph))
      return error;
  return llvm::Error::success();
}

llvm::Error runPipeline(Module& module) {
  for (const std::unique_ptr<Graph>& graph : module.graphs())
    if (llvm::Error error = dync::transforms::optimizeGraph(module, *graph))
      return error;
  return llvm::Error::success();
}

/// Every kernel call back as the ATen calls its kernel holds: what export
/// does to a kernel codegen cannot lower, here for all of them.
llvm::Error runUnfuse(Module& module) {
  for (const std::unique_ptr<Graph>& graph : module.graphs()) {
    llvm::Expected<unsigned> inlined =
        dync::transforms::inlineKernelCalls(module, *graph, [](const Graph&) { return true; });
    if (!inlined)
      return inlined.takeError();
  }
  return llvm::Error::success();
}

/// One line per pass, in the order --list-passes prints them.
constexpr PassInfo kPasses[] = {
    {"dce", "remove pure calls whose results are unused",
     onEachGraph<dync::transforms::runDeadCodeElimination>},
    {"cse", "merge pure calls equal to an earlier one",
     onEachGraph<dync::transforms::runCommonSubexpressionElimination>},
    {"fold", "replace known integers by literals and identities by their operand",
     onEachGraph<dync::transforms::runConstantFolding>},
    {"functionalize", "make in-place calls on private temporaries out-of-place",
     onEachGraph<dync::transforms::runInPlaceToFunctional>},
    {"fuse", "outline pointwise and reduction groups into kernels", dync::transforms::runFusion},
    {"unfuse", "replace every kernel call by the calls its kernel holds", runUnfuse},
    {"plan-memory", "let kernel outputs with disjoint lifetimes share buffers",
     onEachGraph<dync::transforms::runMemoryPlanning>},
    {"optimize", "the pipeline export runs (optimizeGraph)", runPipeline},
};

llvm::ArrayRef<PassInfo> registeredPasses() { return kPasses; }

const PassInfo* findPass(llvm::StringRef name) {
  for (const PassInfo& pass : registeredPasses())
    if (pass.name == name)
      return &pass;
  return nullptr;
}

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
                                                     "(see --list-passes)"),
                                      llvm::cl::value_desc("name,..."), llvm::cl::CommaSeparated,
                                      llvm::cl::cat(category));

llvm::cl::opt<bool> listPasses("list-passes", llvm::cl::desc("List the available passes and exit"),
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
    "  cat model.dync | dync-opt -          read from stdin\n";

} // namespace

int main(int argc, char** argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(argc, argv, overview);

  if (listPasses) {
    for (const PassInfo& pass : registeredPasses())
      llvm::outs() << "  " << pass.name << " - " << pass.description << '\n';
    return 0;
  }

  llvm::SmallVector<const PassInfo*> pipeline;
  for (const std::string& name : passNames) {
    const PassInfo* pass = findPass(name);
    if (!pass) {
      llvm::errs() << "dync-opt: error: unknown pass '" << name << "' (see --list-passes)\n";
      return 1;
    }
    pipeline.push_back(pass);
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

  for (const PassInfo* pass : pipeline) {
    if (llvm::Error error = pass->run(**module))
      return report(std::move(error));
    // Nodes a pass creates have no location; diagnostics then name the node.
    if (llvm::Error error = verify(**module, &sm)) {
      llvm::errs() << "dync-opt: error: the graph does not verify after pass '" << pass->name
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
