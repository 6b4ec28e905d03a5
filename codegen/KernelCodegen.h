//===- KernelCodegen.h - Kernels to native loop nests -----------*- C++ -*-===//
//
// A kernel (an ir::Graph of kind Kernel: pointwise and reduction nodes that
// kernelOpClass() accepts) becomes one self-contained LLVM function holding
// its loop nest. Self-contained means no globals, no shim calls and no
// library calls, so each kernel can be compiled in its own module, in
// parallel, and its object cached by its text (docs/kernels.md).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/VectorIsa.h"
#include "ir/Graph.h"

#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

#include <string>

namespace dync::codegen {

/// The symbol of \p kernel's function: `dync_kernel_` and a hash of the
/// kernel's canonical text with its name left out, so equal kernels share
/// one function and an object cache can key on the text.
std::string kernelSymbol(const ir::Graph& kernel);

/// Emits \p kernel as the external function \p symbol in \p module:
///
///   void symbol(char* const* buffers, const int64_t* symbols,
///               int64_t begin, int64_t end)
///
/// buffers: data pointers of the kernel's inputs, then of its outputs, in
/// order; symbols: the values of the kernel's symbols in its `symbols {}`
/// order; [begin, end): the slice of the outermost (parallel) loop to
/// compute. Every buffer is laid out as its IR type says (sizes, strides);
/// outputs alias nothing. A kernel codegen cannot lower is an error naming
/// the kernel and the node. \p isa is what the target allows beyond what
/// scalar IR vectorizes into (VectorIsa.h); the module records it.
llvm::Error emitKernel(llvm::Module& module, const ir::Graph& kernel, llvm::StringRef symbol,
                       VectorIsa isa = VectorIsa::Generic);

/// How many iterations the outermost loop of \p kernel has, over its
/// symbols; the caller splits [0, extent) across threads. 1 when the kernel
/// has no parallel dimension (a full reduction, a 0-dim result). Assumes
/// emitKernel() accepts the kernel.
ir::SymExpr kernelParallelExtent(const ir::Graph& kernel);

/// Success if emitKernel lowers \p kernel (tried in a scratch module), else
/// why not: export then runs that kernel's nodes as ATen calls instead.
llvm::Error checkKernel(const ir::Graph& kernel);

/// The pipeline every kernel module goes through before the backend: O3
/// with loop and SLP vectorization, tuned for \p tm's CPU. The artifact
/// build, dync-kernel-llc and the kernel tests share it, so what the tests
/// check is what artifacts run.
void optimizeKernelModule(llvm::Module& module, llvm::TargetMachine& tm);

} // namespace dync::codegen
