//===- TargetSpec.h - The CPU an artifact is compiled for ------*- C++ -*-===//
//
// `dync export --target-cpu CPU` picks the CPU whose instructions the
// artifact's code may use; the default is the machine running the export.
// The spec is plain strings so that each compile thread can make its own
// TargetMachine from it (a TargetMachine is not shared between threads), and
// so that the object cache can key on it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

#include <memory>
#include <string>

namespace dync::codegen {

struct TargetSpec {
  std::string triple;
  /// LLVM's name of the CPU, e.g. `znver4`, `sapphirerapids`, `x86-64-v3`.
  std::string cpu;
  /// Features added to the CPU's own, in LLVM's `+a,-b` form: the host's
  /// detected features for the host, empty for a named CPU.
  std::string features;
  /// The instruction-set features the code may use that the runtime checks
  /// at load (comma-separated, the compiler's spelling): what the
  /// descriptor and manifest record.
  std::string requiredFeatures;

  /// One line naming everything code generation depends on, for cache keys.
  std::string describe() const;
};

/// The spec for \p cpu: empty or `native` means the machine running dync.
/// An unknown CPU is an error listing how to find the known ones.
llvm::Expected<TargetSpec> resolveTarget(llvm::StringRef cpu);

/// A new TargetMachine for \p spec (PIC, for a shared library).
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const TargetSpec& spec,
                    llvm::CodeGenOptLevel level = llvm::CodeGenOptLevel::Default);

/// The features the runtime's loader can test (runtime/artifact/
/// CpuFeatures.cpp), in the compiler's spelling. Recording a feature outside
/// this list would make every load fail, since an untestable feature counts
/// as missing; a feature the code may use but that is not listed is not
/// recorded, so the list holds every instruction-set extension generated
/// code can contain.
llvm::ArrayRef<llvm::StringLiteral> loaderTestableFeatures();

} // namespace dync::codegen
