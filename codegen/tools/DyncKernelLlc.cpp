//===- DyncKernelLlc.cpp - Print the LLVM IR of a file's kernels ----------===//
//
// dync-kernel-llc FILE.dync [-O] [--target-cpu CPU] [-o OUT]
//
// Emits every kernel of FILE with emitKernel, each as kernelSymbol names
// it, into one module and prints it as LLVM IR; with -O after the O3
// pipeline, as an artifact build optimizes kernels. Both are for the host
// CPU or --target-cpu's: the instructions kernels may ask for by name
// (VectorIsa.h) depend on it. The tool the kernel lit tests drive.
//
//===----------------------------------------------------------------------===//
#include "codegen/KernelCodegen.h"
#include "codegen/TargetSpec.h"
#include "ir/Parser.h"
#include "ir/Verifier.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"

using namespace dync;

namespace {

llvm::cl::OptionCategory category("dync-kernel-llc options");
llvm::cl::opt<std::string> inputFile(llvm::cl::Positional, llvm::cl::desc("<input .dync file>"),
                                     llvm::cl::Required, llvm::cl::cat(category));
llvm::cl::opt<std::string> outputFile("o", llvm::cl::desc("Output file (default: stdout)"),
                                      llvm::cl::init("-"), llvm::cl::cat(category));
llvm::cl::opt<bool> optimize("O", llvm::cl::desc("Run the O3 pipeline for the target CPU"),
                             llvm::cl::cat(category));
llvm::cl::opt<std::string>
    targetCpu("target-cpu",
              llvm::cl::desc("The CPU to emit and optimize for, in LLVM's spelling (default: the "
                             "host's)"),
              llvm::cl::init("native"), llvm::cl::cat(category));

int fail(const llvm::Twine& message) {
  llvm::errs() << "dync-kernel-llc: error: " << message << "\n";
  return 1;
}

} // namespace

int main(int argc, char** argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(argc, argv, "Print the LLVM IR of a .dync file's kernels\n");
  llvm::InitializeNativeTarget();

  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(inputFile);
  if (!buffer)
    return fail("cannot read " + inputFile + ": " + buffer.getError().message());
  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  ir::Context ctx;
  llvm::Expected<std::unique_ptr<ir::Module>> parsed = ir::parseModule(sm, ctx);
  if (!parsed)
    return fail(llvm::toString(parsed.takeError()));
  if (llvm::Error err = ir::verify(**parsed, &sm))
    return fail(llvm::toString(std::move(err)));

  llvm::LLVMContext context;
  llvm::Module module(inputFile, context);
  llvm::Expected<codegen::TargetSpec> spec = codegen::resolveTarget(targetCpu);
  if (!spec)
    return fail(llvm::toString(spec.takeError()));
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> created =
      codegen::createTargetMachine(*spec, llvm::CodeGenOptLevel::Aggressive);
  if (!created)
    return fail(llvm::toString(created.takeError()));
  std::unique_ptr<llvm::TargetMachine> tm = std::move(*created);
  module.setDataLayout(tm->createDataLayout());
  module.setTargetTriple(tm->getTargetTriple().str());
  for (const std::unique_ptr<ir::Graph>& kernel : (*parsed)->kernels())
    if (llvm::Error err = codegen::emitKernel(module, *kernel, codegen::kernelSymbol(*kernel),
                                              codegen::vectorIsaOf(*tm)))
      return fail(llvm::toString(std::move(err)));
  if (llvm::verifyModule(module, &llvm::errs()))
    return fail("the emitted module is invalid");
  if (optimize)
    codegen::optimizeKernelModule(module, *tm);

  std::error_code ec;
  llvm::ToolOutputFile out(outputFile, ec, llvm::sys::fs::OF_None);
  if (ec)
    return fail("cannot write " + outputFile + ": " + ec.message());
  module.print(out.os(), nullptr);
  out.keep();
  return 0;
}
