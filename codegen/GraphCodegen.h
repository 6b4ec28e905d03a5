//===- GraphCodegen.h - Graph IR to LLVM IR, one shim call per node -*- C++ -*-===//
//
// Compiles an ir::Graph into an LLVM function with dync_artifact.h's graph
// signature. Every ATen call node becomes one boxed call into ATen through
// the runtime's shim table (dync_shim_api): arguments pushed in schema
// order, dync_op_call, results taken. Operator handles are resolved once, by
// the artifact's init function, and kept in module globals. A call of a
// generated kernel allocates its outputs and runs the kernel's function over
// the shim's parallel_for (docs/kernels.md, "Calling kernels").
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/OpSchemas.h"
#include "codegen/ShimModule.h"
#include "ir/Graph.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"

#include <string>

namespace dync::codegen {

/// The counts the descriptor records for a graph.
struct GraphSignature {
  unsigned numInputs = 0;
  unsigned numIntInputs = 0;
  unsigned numOutputs = 0;
};

/// Emits \p graph as an internal function named \p functionName with the
/// dync_graph_fn signature. Tensor inputs are the graph's tensor-typed
/// inputs in order, int inputs its int-typed ones. A call of a kernel
/// (`@k0`) allocates the outputs (or views of memory planning's buffers),
/// checks the layout of inputs not made by a kernel, and runs the external
/// function kernelSymbol() names over parallel_for; that function comes
/// from another object (ArtifactBuilder) or from emitKernel in the same
/// module. \p schemas places keyword
/// arguments; a graph with keyword arguments of an operator it does not know
/// is an error. Constructs codegen does not support yet are errors naming
/// the node, never miscompiled.
llvm::Expected<GraphSignature> emitGraphFunction(ShimModule& shim, const ir::Graph& graph,
                                                 llvm::StringRef functionName,
                                                 const OpSchemas* schemas = nullptr);

} // namespace dync::codegen
