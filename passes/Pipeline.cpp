//===- Pipeline.cpp - The registry of passes and named pipelines ----------===//
#include "passes/Pipeline.h"

#include "ir/Graph.h"
#include "ir/Verifier.h"
#include "passes/Fusion.h"
#include "passes/KernelInlining.h"
#include "passes/MemoryPlan.h"
#include "passes/Passes.h"

#include "llvm/ADT/STLExtras.h"

namespace dync::transforms {

namespace {

/// A pass that needs only the graph.
template <llvm::Error (*pass)(ir::Graph&)>
llvm::Error onGraph(ir::Module&, ir::Graph& graph, const PassOptions&) {
  return pass(graph);
}

llvm::Error fuse(ir::Module& module, ir::Graph& graph, const PassOptions&) {
  return runFusion(module, graph);
}

/// Every kernel call back as the ATen calls its kernel holds.
llvm::Error unfuseAll(ir::Module& module, ir::Graph& graph, const PassOptions&) {
  llvm::Expected<unsigned> inlined =
      inlineKernelCalls(module, graph, [](const ir::Graph&) { return true; });
  return inlined ? llvm::Error::success() : inlined.takeError();
}

/// A kernel codegen cannot lower runs as the ATen calls it holds: slower,
/// never wrong, and the graph is still compiled.
llvm::Error unfuseUnlowerable(ir::Module& module, ir::Graph& graph, const PassOptions& options) {
  if (!options.checkKernel)
    return llvm::createStringError(
        "pass 'unfuse-unlowerable' needs codegen's kernel check, which this caller lacks");
  llvm::Expected<unsigned> inlined = inlineKernelCalls(module, graph, [&](const ir::Graph& kernel) {
    llvm::Error why = options.checkKernel(kernel);
    if (!why)
      return false;
    if (options.onUnfused)
      options.onUnfused(kernel, std::move(why));
    else
      llvm::consumeError(std::move(why));
    return true;
  });
  return inlined ? llvm::Error::success() : inlined.takeError();
}

constexpr PassInfo kPasses[] = {
    {"dce", "remove pure calls whose results are unused", onGraph<runDeadCodeElimination>,
     /*keepsAutograd=*/true},
    {"cse", "merge pure calls equal to an earlier one", onGraph<runCommonSubexpressionElimination>},
    {"fold", "replace known integers by literals and identities by their operand",
     onGraph<runConstantFolding>},
    {"functionalize", "make in-place calls on private temporaries out-of-place",
     onGraph<runInPlaceToFunctional>},
    {"fuse", "outline pointwise and reduction groups into kernels", fuse},
    {"unfuse", "replace every kernel call by the calls its kernel holds", unfuseAll},
    {"unfuse-unlowerable",
     "replace the calls of kernels codegen cannot lower by the calls they hold", unfuseUnlowerable},
    {"plan-memory", "let kernel outputs with disjoint lifetimes share buffers",
     onGraph<runMemoryPlanning>},
};

/// Writes to temporaries first, as they block the others. Then folding:
/// literals and forwarded identities make more calls equal and more calls
/// dead. CSE before DCE, since merging leaves calls unused. Fusion outlines
/// what the cleanups left, and memory planning comes last: it plans the
/// buffers of fusion's kernel calls.
constexpr llvm::StringLiteral kOptimize[] = {"functionalize", "fold", "cse",
                                             "dce",           "fuse", "plan-memory"};
/// What export runs at -O1: the above, then the kernels codegen cannot
/// lower back to ATen calls.
constexpr llvm::StringLiteral kExportO1[] = {
    "functionalize", "fold", "cse", "dce", "fuse", "plan-memory", "unfuse-unlowerable"};

constexpr PipelineInfo kPipelines[] = {
    {"optimize", "clean up, fuse and plan memory (export-O1 without unfusing)", kOptimize},
    {"export-O1", "what 'dync export' runs at -O1 on every graph", kExportO1},
};

/// Whether \p type is, or holds, a tensor that requires grad.
bool requiresGrad(const ir::Type& type) {
  if (type.isTensor())
    return type.requiresGrad();
  return llvm::any_of(type.elements(), requiresGrad);
}

} // namespace

llvm::ArrayRef<PassInfo> registeredPasses() { return kPasses; }

llvm::ArrayRef<PipelineInfo> registeredPipelines() { return kPipelines; }

const PassInfo* findPass(llvm::StringRef name) {
  for (const PassInfo& pass : kPasses)
    if (pass.name == name)
      return &pass;
  return nullptr;
}

const PipelineInfo* findPipeline(llvm::StringRef name) {
  for (const PipelineInfo& pipeline : kPipelines)
    if (pipeline.name == name)
      return &pipeline;
  return nullptr;
}

bool recordsAutograd(const ir::Graph& graph) {
  // Under no_grad nothing is recorded, whatever requires grad.
  bool noGrad = llvm::any_of(graph.guards().guards(), [](const ir::Guard& guard) {
    return guard.kind == ir::GuardKind::GradMode && !guard.flag;
  });
  return !noGrad && llvm::any_of(graph.nodes(),
                                 [](const ir::Node& node) { return requiresGrad(node.type()); });
}

llvm::Error runPipeline(const PipelineInfo& pipeline, ir::Module& module, ir::Graph& graph,
                        const PassOptions& options) {
  // Read once: no pass that runs on such a graph makes it stop recording.
  bool keepOnlyAutograd = recordsAutograd(graph);
  for (llvm::StringRef name : pipeline.passes) {
    const PassInfo* pass = findPass(name);
    if (!pass)
      return llvm::createStringError("pipeline '" + pipeline.name + "' names no pass '" + name +
                                     "'");
    if (keepOnlyAutograd && !pass->keepsAutograd)
      continue;
    if (llvm::Error error = pass->run(module, graph, options))
      return error;
    // A pass that breaks the graph is a compiler bug; say which one.
    if (llvm::Error error = ir::verify(graph))
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(), "graph @%s does not verify after pass '%s': %s",
          graph.name().c_str(), pass->name.data(), llvm::toString(std::move(error)).c_str());
  }
  return llvm::Error::success();
}

} // namespace dync::transforms
