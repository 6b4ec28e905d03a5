//===- FallBackGenerator.cpp - The generator's state across a fall-back ---===//
//
// A graph that falls back (a fall-back check fails, a size computed from
// data is outside the range capture assumed, Python arithmetic gives what
// the graph cannot hold) returns DYNC_ARTIFACT_FALL_BACK, and the runtime
// runs the program's original code in its place. Random operators the
// graph ran before that point have advanced torch's default CPU generator,
// and the original code would draw again from where they left it: other
// numbers than eager's. So such a graph saves the generator's state just
// before its first random operator (nothing before it reads or changes the
// generator) and, on every fall-back after it, puts that state back before
// returning; the original code then draws exactly what eager draws. A
// graph's random operators are ATen calls (and dync's own generator
// operators, `torch.manual_seed` in the program) that draw from the default
// CPU generator: capture refuses a generator passed as an argument, and
// fused kernels never draw. Whether a call of a random operator draws is
// read from its arguments (ir/RandomDraws.h): CPU attention at dropout_p 0
// is tagged random and draws nothing. The normal return leaves the generator where
// the draws left it, as eager does. Whether a fall-back follows a draw is
// known once every node is emitted, so the save is put in place last: a
// graph with no fall-back after a draw saves nothing. A subgraph (a cond
// branch, a while_loop body) saves and puts back its own draws; a fall-back
// it returns puts back the caller's too (restoreIfSubgraphFellBack).
//
//===----------------------------------------------------------------------===//
#include "codegen/GraphEmitter.h"

#include "ir/ControlFlow.h"
#include "ir/Graph.h"
#include "ir/RandomDraws.h"
#include "ir/ScalarOps.h"

#include "llvm/ADT/STLExtras.h"

namespace dync::codegen::detail {

namespace {

/// The subgraphs \p node runs (a cond's branches, a while_loop's cond and
/// body), as \p graph's module holds them.
std::vector<const ir::Graph*> subgraphsOf(const ir::Graph& graph, const ir::Node& node) {
  std::vector<const ir::Graph*> found;
  for (llvm::StringRef name : ir::calledSubgraphNames(node))
    if (const ir::Graph* subgraph = graph.module() ? graph.module()->findSubgraph(name) : nullptr)
      found.push_back(subgraph);
  return found;
}

/// Whether \p node draws from, reseeds or sets the default generator (by
/// its arguments: ir/RandomDraws.h), or runs a subgraph that does.
bool usesGenerator(const ir::Graph& graph, const ir::Node& node) {
  if (!node.isCall() || node.isKernelCall() || ir::scalarOpOf(node))
    return false;
  for (const ir::Graph* subgraph : subgraphsOf(graph, node))
    if (llvm::any_of(subgraph->nodes(),
                     [&](const ir::Node& inner) { return usesGenerator(*subgraph, inner); }))
      return true;
  // Decided per call: attention at dropout_p 0 draws nothing, so a graph
  // of attention layers saves nothing.
  return ir::mayDraw(node);
}

} // namespace

void GraphEmitter::noteGeneratorUse(const ir::Node& node) {
  if (firstDraw_ || !usesGenerator(graph_, node))
    return;
  // Whether the state must be saved is known once every fall-back block is
  // made: the save goes between these two blocks then (finishGeneratorSave).
  firstDraw_ = &node;
  savedGenerator_ = entryAlloca(b_.getPtrTy(), nullptr, "generator.saved");
  allocas_.CreateStore(llvm::ConstantPointerNull::get(b_.getPtrTy()), savedGenerator_);
  saveFrom_ = b_.GetInsertBlock();
  saveTo_ = llvm::BasicBlock::Create(ctx_, "draws." + node.name(), fn_);
  b_.CreateBr(saveTo_);
  b_.SetInsertPoint(saveTo_);
}

void GraphEmitter::restoreGeneratorForFallBack() {
  if (!savedGenerator_)
    return;
  generatorRestored_ = true;
  Value* state = b_.CreateLoad(b_.getPtrTy(), savedGenerator_, "generator.state");
  Value* status = shim_.call(b_, ShimFn::GeneratorStateRestore, {state}, "generator.restore");
  auto* failed = llvm::BasicBlock::Create(ctx_, "fail.restore", fn_);
  auto* restored = llvm::BasicBlock::Create(ctx_, "fall.back", fn_);
  b_.CreateCondBr(b_.CreateICmpNE(status, b_.getInt32(DYNC_OK)), failed, restored);
  b_.SetInsertPoint(failed);
  b_.CreateCall(shim_.setErrorFunction(),
                {fn_->getArg(6), fn_->getArg(7),
                 shim_.string("graph " + graph_.name() +
                                  ": putting the random generator's state back before running "
                                  "the original code: ",
                              "msg"),
                 shim_.call(b_, ShimFn::LastError, {}, "message")});
  b_.CreateStore(b_.getInt32(DYNC_ARTIFACT_ERROR), status_);
  b_.CreateBr(cleanup_);
  b_.SetInsertPoint(restored);
}

void GraphEmitter::restoreIfSubgraphFellBack(Value* status, const llvm::Twine& name) {
  if (!savedGenerator_)
    return;
  // The subgraph fell back: what this graph drew before it is undone too.
  auto* restore = llvm::BasicBlock::Create(ctx_, name, fn_);
  b_.CreateCondBr(b_.CreateICmpEQ(status, b_.getInt32(DYNC_ARTIFACT_FALL_BACK)), restore, cleanup_);
  b_.SetInsertPoint(restore);
  restoreGeneratorForFallBack();
}

void GraphEmitter::reportSubgraphFailure(const ir::Node& node, Value* status,
                                         const llvm::Twine& name) {
  // A subgraph that falls back hands the call to the original code, which
  // runs the whole function again from its start: what this graph did
  // before the subgraph must be undone, or the original code does it a
  // second time. Draws are put back below; a write to an input cannot be,
  // so the call raises as a check placed here would (DataDependentSizes.cpp).
  std::string done = observableBefore(graph_, node);
  if (!done.empty()) {
    llvm::BasicBlock* refused =
        failBlock("RuntimeError: %" + node.name() + " (" + node.op() +
                      ") ran a subgraph that falls back to the original code; the graph cannot "
                      "fall back to it because " +
                      done + " before it" + node.location().suffix(),
                  nullptr, /*shimError=*/false, DYNC_ARTIFACT_CHECK_FAILED);
    auto* kept = llvm::BasicBlock::Create(ctx_, name + ".kept", fn_);
    b_.CreateCondBr(b_.CreateICmpEQ(status, b_.getInt32(DYNC_ARTIFACT_FALL_BACK)), refused, kept);
    b_.SetInsertPoint(kept);
  }
  b_.CreateStore(status, status_);
  restoreIfSubgraphFellBack(status, name);
}

void GraphEmitter::finishGeneratorSave() {
  if (!generatorRestored_)
    return;
  llvm::BasicBlock* resume = b_.GetInsertBlock();
  auto* save = llvm::BasicBlock::Create(ctx_, "generator.save", fn_, saveTo_);
  saveFrom_->getTerminator()->eraseFromParent();
  b_.SetInsertPoint(saveFrom_);
  b_.CreateBr(save);
  b_.SetInsertPoint(save);
  Value* status =
      shim_.call(b_, ShimFn::GeneratorStateSave, {savedGenerator_}, "generator.saved.status");
  llvm::BasicBlock* fail =
      failBlock("graph " + graph_.name() + ": saving the random generator's state before %" +
                    firstDraw_->name() + " (" + firstDraw_->op() + "): ",
                nullptr, /*shimError=*/true);
  b_.CreateCondBr(b_.CreateICmpNE(status, b_.getInt32(DYNC_OK)), fail, saveTo_);
  // Released in the cleanup, as the graph's tensors are.
  allCells_.push_back(savedGenerator_);
  b_.SetInsertPoint(resume);
}

} // namespace dync::codegen::detail
