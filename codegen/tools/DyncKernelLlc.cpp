//===- DyncKernelLlc.cpp - Print the LLVM IR of a file's kernels ----------===//
//
// dync-kernel-llc FILE.dync [-O] [-o OUT]
//
// Emits every kernel of FILE with emitKernel, each as kernelSymbol names
// it, into one module and prints it as LLVM IR; with -O after the O3
// pipeline for the host CPU, as an artifact build optimizes kernels. The
// tool the kernel lit tests drive.
//
//===----------------------------------------------------------------------===//
#include "codegen/KernelCodegen.h"
#include "passes/ir/Parser.h"
#include "passes/ir/Verifier.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

using namespace dync;

namespace {

llvm::cl::OptionCategory category("dync-kernel-llc options");
llvm::cl::opt<std::string> inputFile(llvm::cl::Positional, llvm::cl::desc("<input .dync file>"),
                                     llvm::cl::Required, llvm::cl::cat(category));
llvm::cl::opt<std::string> outputFile("o", llvm::cl::desc("Output file (default: stdout)"),
                                      llvm::cl::init("-"), llvm::cl::cat(category));
llvm::cl::opt<bool> optimize("O", llvm::cl::desc("Run the O3 pipeline for the host CPU"),
                             llvm::cl::cat(category));

int fail(const llvm::Twine& message) {
  llvm::errs() << "dync-kernel-llc: error: " << message << "\n";
  return 1;
}

std::unique_ptr<llvm::TargetMachine> hostMachine() {
  std::string triple = llvm::sys::getDefaultTargetTriple();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  llvm::SubtargetFeatures features;
  for (const auto& [name, enabled] : llvm::sys::getHostCPUFeatures())
    features.AddFeature(name, enabled);
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      triple, llvm::sys::getHostCPUName(), features.getString(), llvm::TargetOptions(),
      llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
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
  std::unique_ptr<llvm::TargetMachine> tm = hostMachine();
  if (!tm)
    return fail("no target for the host");
  module.setDataLayout(tm->createDataLayout());
  module.setTargetTriple(tm->getTargetTriple().str());
  for (const std::unique_ptr<ir::Graph>& kernel : (*parsed)->kernels())
    if (llvm::Error err = codegen::emitKernel(module, *kernel, codegen::kernelSymbol(*kernel)))
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
