//===- Pipeline.cpp - The passes export runs on every graph ---------------===//
#include "passes/transforms/Pipeline.h"

#include "passes/ir/Graph.h"
#include "passes/ir/Verifier.h"
#include "passes/transforms/Fusion.h"
#include "passes/transforms/MemoryPlan.h"
#include "passes/transforms/Passes.h"

#include "llvm/ADT/STLExtras.h"

namespace dync::transforms {

namespace {

/// One step of the pipeline: a name for diagnostics and the pass.
struct Step {
  const char* name;
  llvm::Error (*run)(ir::Graph&);
};

/// Writes to temporaries first, as they block the others. Then folding:
/// literals and forwarded identities make more calls equal and more calls
/// dead. CSE before DCE, since merging leaves calls unused.
constexpr Step kSteps[] = {
    {"functionalize", runInPlaceToFunctional},
    {"fold", runConstantFolding},
    {"cse", runCommonSubexpressionElimination},
    {"dce", runDeadCodeElimination},
};

/// Whether \p type is, or holds, a tensor that requires grad.
bool requiresGrad(const ir::Type& type) {
  if (type.isTensor())
    return type.requiresGrad();
  return llvm::any_of(type.elements(), requiresGrad);
}

} // namespace

bool recordsAutograd(const ir::Graph& graph) {
  // Under no_grad nothing is recorded, whatever requires grad.
  bool noGrad = llvm::any_of(graph.guards().guards(), [](const ir::Guard& guard) {
    return guard.kind == ir::GuardKind::GradMode && !guard.flag;
  });
  return !noGrad && llvm::any_of(graph.nodes(),
                                 [](const ir::Node& node) { return requiresGrad(node.type()); });
}

llvm::Error optimizeGraph(ir::Module& module, ir::Graph& graph) {
  if (recordsAutograd(graph))
    return llvm::Error::success();
  for (const Step& step : kSteps) {
    if (llvm::Error error = step.run(graph))
      return error;
    // A pass that breaks the graph is a compiler bug; say which one.
    if (llvm::Error error = ir::verify(graph))
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(), "graph @%s does not verify after pass '%s': %s",
          graph.name().c_str(), step.name, llvm::toString(std::move(error)).c_str());
  }
  if (llvm::Error error = runFusion(module, graph)) // it outlines what the cleanups left
    return error;
  return runMemoryPlanning(graph); // last: it plans the buffers of fusion's kernel calls
}

} // namespace dync::transforms
