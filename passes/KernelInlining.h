//===- KernelInlining.h - Turning kernel calls back into ATen calls -*- C++ -*-===//
//
// A kernel holds ATen calls; putting them back in place of the call that
// runs it gives the graph the same results, one ATen call per node. Export
// does this for a kernel that code generation cannot lower, so a fusion
// codegen does not support costs speed, never an entry.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace dync::ir {
class Graph;
class Module;
} // namespace dync::ir

namespace dync::transforms {

/// Replaces each call in \p graph of a kernel for which \p inlineIt returns
/// true by the kernel's nodes, with fresh names; the kernel stays in
/// \p module. Returns how many calls were inlined.
llvm::Expected<unsigned> inlineKernelCalls(ir::Module& module, ir::Graph& graph,
                                           llvm::function_ref<bool(const ir::Graph&)> inlineIt);

} // namespace dync::transforms
