//===- Pipeline.h - The registry of passes and named pipelines -*- C++ -*-===//
//
// The one list of the graph passes and of the pipelines built from them.
// `dync export` runs the pipeline its -O level names (export-O1) on every
// graph it captures, and `dync-opt --pipeline=NAME` runs the same pipeline
// on graph IR text, so that what export does to a graph can be replayed and
// tested without Python.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <functional>

namespace dync::ir {
class Graph;
class Module;
} // namespace dync::ir

namespace dync::transforms {

/// What a pass may need from the layers above the passes: codegen decides
/// which kernels it can lower, and the passes must not depend on it.
struct PassOptions {
  /// Why codegen cannot lower \p kernel, or success. Null: the
  /// `unfuse-unlowerable` pass is an error, it has nothing to ask.
  std::function<llvm::Error(const ir::Graph& kernel)> checkKernel;
  /// Told of each kernel `unfuse-unlowerable` inlines, with why; null
  /// drops the reason.
  std::function<void(const ir::Graph& kernel, llvm::Error why)> onUnfused;
};

/// A transformation of one entry graph of a module. Each must leave a graph
/// that verifies; the module receives the kernels fusion outlines.
struct PassInfo {
  llvm::StringLiteral name;
  llvm::StringLiteral description;
  llvm::Error (*run)(ir::Module& module, ir::Graph& graph, const PassOptions& options);
  /// The pass leaves what autograd records of the graph as it was, so it
  /// also runs on a graph that recordsAutograd(): it only removes calls
  /// whose results nothing reads and that have no effect, whose autograd
  /// nodes nothing reaches either.
  bool keepsAutograd = false;
};

/// A named sequence of passes.
struct PipelineInfo {
  llvm::StringLiteral name;
  llvm::StringLiteral description;
  llvm::ArrayRef<llvm::StringLiteral> passes;
};

/// Every pass, in the order `dync-opt --list-passes` prints them.
llvm::ArrayRef<PassInfo> registeredPasses();

/// Every named pipeline; `export-O1` is what `dync export` runs at -O1.
llvm::ArrayRef<PipelineInfo> registeredPipelines();

/// The pass or pipeline called \p name; null if there is none.
const PassInfo* findPass(llvm::StringRef name);
const PipelineInfo* findPipeline(llvm::StringRef name);

/// Whether running \p graph records autograd: some input or result of a call
/// requires grad, and its guards do not say grad mode is off. Its ATen calls must then run one by
/// one, as captured, so that autograd records what eager records: kernels compute values only, and
/// rewriting in-place calls or merging calls changes the backward graph.
bool recordsAutograd(const ir::Graph& graph);

/// Runs \p pipeline on \p graph (which \p module holds), verifying the graph
/// after each pass; a pass that breaks it is an error naming the pass. On a
/// graph that recordsAutograd() only the passes that keepsAutograd run.
llvm::Error runPipeline(const PipelineInfo& pipeline, ir::Module& module, ir::Graph& graph,
                        const PassOptions& options);

} // namespace dync::transforms
