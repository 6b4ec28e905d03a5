//===- TargetSpec.cpp - The CPU an artifact is compiled for ---------------===//
#include "codegen/TargetSpec.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

using namespace dync;
using namespace dync::codegen;

namespace {

// Every name here must have a case in runtime/artifact/CpuFeatures.cpp.
constexpr llvm::StringLiteral testableFeatures[] = {"cmov",         "mmx",
                                                    "popcnt",       "sse",
                                                    "sse2",         "sse3",
                                                    "ssse3",        "sse4.1",
                                                    "sse4.2",       "sse4a",
                                                    "avx",          "avx2",
                                                    "fma",          "fma4",
                                                    "xop",          "f16c",
                                                    "bmi",          "bmi2",
                                                    "lzcnt",        "movbe",
                                                    "adx",          "aes",
                                                    "pclmul",       "sha",
                                                    "vaes",         "avx512f",
                                                    "avx512vl",     "avx512bw",
                                                    "avx512dq",     "avx512cd",
                                                    "avx512vbmi",   "avx512ifma",
                                                    "avx512vbmi2",  "avx512vnni",
                                                    "avx512bitalg", "avx512bf16",
                                                    "avx512fp16",   "avx512vpopcntdq",
                                                    "gfni",         "vpclmulqdq",
                                                    "avxvnni",      "amx-tile",
                                                    "amx-int8",     "amx-bf16"};

const llvm::Target* lookupTarget(llvm::StringRef triple) {
  std::string error;
  return llvm::TargetRegistry::lookupTarget(triple.str(), error);
}

std::string hostFeatureString() {
  llvm::SubtargetFeatures features;
  for (const auto& feature : llvm::sys::getHostCPUFeatures())
    features.AddFeature(feature.first(), feature.second);
  return features.getString();
}

/// The known CPU closest to \p cpu by edit distance, for "did you mean".
std::string closestCpu(const llvm::MCSubtargetInfo& sti, llvm::StringRef cpu) {
  std::string best;
  unsigned bestDistance = ~0u;
  for (const llvm::SubtargetSubTypeKV& known : sti.getAllProcessorDescriptions()) {
    unsigned distance = cpu.edit_distance(known.Key, /*AllowReplacements=*/true, bestDistance);
    if (distance < bestDistance) {
      bestDistance = distance;
      best = known.Key;
    }
  }
  return bestDistance <= 3 ? best : std::string();
}

} // namespace

llvm::ArrayRef<llvm::StringLiteral> codegen::loaderTestableFeatures() { return testableFeatures; }

std::string TargetSpec::describe() const {
  return "triple=" + triple + " cpu=" + cpu + " features=" + features;
}

llvm::Expected<TargetSpec> codegen::resolveTarget(llvm::StringRef cpu) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  TargetSpec spec;
  spec.triple = llvm::sys::getProcessTriple();
  const llvm::Target* target = lookupTarget(spec.triple);
  if (!target)
    return llvm::createStringError("no LLVM target for " + spec.triple);
  if (cpu.empty() || cpu == "native") {
    spec.cpu = llvm::sys::getHostCPUName().str();
    spec.features = hostFeatureString();
  } else {
    // Asked before making a subtarget for it, which would only warn on
    // stderr and fall back to a generic CPU.
    std::unique_ptr<llvm::MCSubtargetInfo> generic(
        target->createMCSubtargetInfo(spec.triple, "", ""));
    if (!generic || !generic->isCPUStringValid(cpu)) {
      std::string suggestion = generic ? closestCpu(*generic, cpu) : std::string();
      return llvm::createStringError(
          "unknown CPU '" + cpu + "' for " + spec.triple +
          (suggestion.empty() ? "" : "; did you mean '" + suggestion + "'?") +
          " ('native' is this machine; 'llc -mcpu=help' lists the others)");
    }
    spec.cpu = cpu.str();
  }
  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      target->createMCSubtargetInfo(spec.triple, spec.cpu, spec.features));
  if (!sti)
    return llvm::createStringError("cannot describe CPU '" + spec.cpu + "' for " + spec.triple);
  for (llvm::StringRef feature : testableFeatures) {
    if (!sti->checkFeatures(("+" + feature).str()))
      continue;
    if (!spec.requiredFeatures.empty())
      spec.requiredFeatures += ',';
    spec.requiredFeatures += feature;
  }
  return spec;
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
codegen::createTargetMachine(const TargetSpec& spec, llvm::CodeGenOptLevel level) {
  const llvm::Target* target = lookupTarget(spec.triple);
  if (!target)
    return llvm::createStringError("no LLVM target for " + spec.triple);
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      spec.triple, spec.cpu, spec.features, options, llvm::Reloc::PIC_, std::nullopt, level));
  if (!tm)
    return llvm::createStringError("cannot create a target machine for " + spec.triple + ", CPU " +
                                   spec.cpu);
  return tm;
}
