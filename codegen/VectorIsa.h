//===- VectorIsa.h - Vector instructions kernels ask for by name -*- C++ -*-===//
//
// Kernel elements are scalar IR that LLVM's loop vectorizer widens. Two
// instructions that make exp cheaper have no scalar IR the vectorizer could
// widen into them: a permute that looks up sixteen lanes in a table held in
// one register (vpermps), and a scaling by 2^n that rounds a subnormal
// result once (vscalefps). On a target with AVX-512 a kernel calls them as
// small functions that declare vector variants (LLVM's vector function ABI,
// the `vector-function-abi-variant` attribute); the vectorizer calls the
// variant of its width, and inlineVectorIsaCalls() then inlines every one,
// so the object holds the bare instructions.
//
// Which ISA a kernel module may use is a module flag, set by emitKernel()
// from the target machine: the IR text then names it, so an object cached
// for one ISA is never served for another.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Target/TargetMachine.h"

namespace dync::codegen {

enum class VectorIsa {
  /// Only what scalar IR vectorizes into on any target.
  Generic,
  /// AVX-512 F and VL: vpermps on a 16-lane table, vscalefps.
  Avx512,
};

/// The ISA \p tm's CPU and features allow.
VectorIsa vectorIsaOf(const llvm::TargetMachine& tm);
/// Records \p isa in \p module (a module flag; Generic records nothing).
void setVectorIsa(llvm::Module& module, VectorIsa isa);
/// What setVectorIsa() recorded in \p module; Generic if nothing.
VectorIsa vectorIsaOf(const llvm::Module& module);

/// table[index mod 16] for an i32 \p index and a 16-entry f32 \p table.
/// Needs VectorIsa::Avx512 in the builder's module.
llvm::Value* emitTableLookup(llvm::IRBuilder<>& b, llvm::ArrayRef<float> table, llvm::Value* index);
/// x 2^floor(n) for f32 \p x and \p n, rounded once (subnormal, overflow
/// to inf, NaN as either operand's). Needs VectorIsa::Avx512.
llvm::Value* emitScalef(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* n);

/// Inlines every call to the functions above and deletes them; run after
/// the loop vectorizer has replaced the calls it widened by their variants,
/// with the analyses of the pipeline that ran it.
void inlineVectorIsaCalls(llvm::Module& module, llvm::ModuleAnalysisManager& analyses);

} // namespace dync::codegen
