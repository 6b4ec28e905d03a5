//===- CondLowering.cpp - torch.cond nodes in a graph function -----------===//
//
// How a graph function runs a `higher_order::cond` node (ir/ControlFlow.h):
// each branch subgraph is compiled as a graph function of its own, with the
// same signature as an entry's, named after the calling function so that
// graphs of different modules never share one; the node reads its bool
// predicate, calls the function of the branch it picks with its operands as
// borrowed inputs, and takes the new references that function returns as
// its results. A failing branch has written its message already; the
// caller passes its status on.
//
//===----------------------------------------------------------------------===//

#include "codegen/GraphEmitter.h"
#include "ir/ControlFlow.h"

using namespace dync;
using namespace dync::codegen;
using namespace dync::codegen::detail;

llvm::Expected<llvm::Function*> GraphEmitter::subgraphFunction(const ir::Node& node,
                                                               llvm::StringRef name) {
  const ir::Graph* subgraph = graph_.module() ? graph_.module()->findSubgraph(name) : nullptr;
  if (!subgraph)
    return unsupported(&node,
                       "the subgraph @" + name + ", which the graph's module does not hold,");
  std::string symbol = functionName_ + "." + name.str();
  if (llvm::Function* emitted = shim_.module().getFunction(symbol))
    return emitted;
  llvm::Expected<GraphSignature> signature = emitGraphFunction(shim_, *subgraph, symbol, schemas_);
  if (!signature)
    return signature.takeError();
  if (signature->numIntInputs != 0)
    return unsupported(&node, "a subgraph with int inputs");
  return shim_.module().getFunction(symbol);
}

llvm::Expected<llvm::Function*> GraphEmitter::branchFunction(const ir::Node& node, bool taken) {
  return subgraphFunction(node, ir::condBranchName(node, taken));
}

llvm::Error GraphEmitter::emitCond(const ir::Node& node, unsigned position) {
  llvm::Expected<const Slot*> pred = slotOf(&node, ir::condPredicate(node).valueRef());
  if (!pred)
    return pred.takeError();
  if ((*pred)->kind != SlotKind::Bool)
    return unsupported(&node, "a cond predicate that is not a bool");
  llvm::Expected<llvm::Function*> onTrue = branchFunction(node, true);
  if (!onTrue)
    return onTrue.takeError();
  llvm::Expected<llvm::Function*> onFalse = branchFunction(node, false);
  if (!onFalse)
    return onFalse.takeError();

  // The operands, borrowed by the branch for the length of the call.
  llvm::ArrayRef<ir::Argument> operands = ir::condOperands(node);
  llvm::PointerType* ptr = b_.getPtrTy();
  llvm::AllocaInst* inputs =
      entryAlloca(ptr, allocas_.getInt64(std::max<size_t>(operands.size(), 1)), "cond.inputs");
  for (auto [i, operand] : llvm::enumerate(operands)) {
    llvm::Expected<const Slot*> slot = slotOf(&node, operand.valueRef());
    if (!slot)
      return slot.takeError();
    if ((*slot)->kind != SlotKind::Tensor)
      return unsupported(&node, "a cond operand that is not a tensor");
    b_.CreateStore(tensorHandle(**slot), b_.CreateConstInBoundsGEP1_64(ptr, inputs, i));
  }
  unsigned numOutputs = node.type().elements().size();
  llvm::AllocaInst* outputs =
      entryAlloca(ptr, allocas_.getInt64(std::max(numOutputs, 1u)), "cond.outputs");

  auto* thenBlock = llvm::BasicBlock::Create(ctx_, "cond.true." + node.name(), fn_);
  auto* elseBlock = llvm::BasicBlock::Create(ctx_, "cond.false." + node.name(), fn_);
  auto* joinBlock = llvm::BasicBlock::Create(ctx_, "cond.join." + node.name(), fn_);
  b_.CreateCondBr(b_.CreateICmpNE((*pred)->value, b_.getInt32(0)), thenBlock, elseBlock);
  auto callBranch = [&](llvm::BasicBlock* block, llvm::Function* branch) {
    b_.SetInsertPoint(block);
    Value* status = b_.CreateCall(
        branch, {inputs, b_.getInt64(operands.size()), llvm::ConstantPointerNull::get(ptr),
                 b_.getInt64(0), outputs, b_.getInt64(numOutputs), fn_->getArg(6), fn_->getArg(7)});
    b_.CreateBr(joinBlock);
    return status;
  };
  Value* trueStatus = callBranch(thenBlock, *onTrue);
  Value* falseStatus = callBranch(elseBlock, *onFalse);
  b_.SetInsertPoint(joinBlock);
  llvm::PHINode* status = b_.CreatePHI(b_.getInt32Ty(), 2, "cond.status");
  status->addIncoming(trueStatus, thenBlock);
  status->addIncoming(falseStatus, elseBlock);

  // The branch wrote its message; its status (a failed check included)
  // becomes this function's.
  llvm::BasicBlock* saved = b_.GetInsertBlock();
  auto* failed = llvm::BasicBlock::Create(ctx_, "cond.failed." + node.name(), fn_);
  b_.SetInsertPoint(failed);
  reportSubgraphFailure(node, status, "cond.fall.back." + node.name());
  b_.CreateBr(cleanup_);
  b_.SetInsertPoint(saved);
  checkOrFail(b_.CreateICmpNE(status, b_.getInt32(DYNC_ARTIFACT_OK)), failed,
              "cond.ok." + node.name());

  NodeValues& values = values_[&node];
  values.sequence = true;
  for (unsigned k = 0; k < numOutputs; ++k) {
    Slot slot;
    slot.kind = SlotKind::Tensor;
    slot.cell = newCell("cell." + node.name() + "." + llvm::Twine(k));
    b_.CreateStore(b_.CreateLoad(ptr, b_.CreateConstInBoundsGEP1_64(ptr, outputs, k)), slot.cell);
    values.slots.push_back(slot);
  }
  releaseDead(node, position);
  return llvm::Error::success();
}
