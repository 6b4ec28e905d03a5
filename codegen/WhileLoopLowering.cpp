//===- WhileLoopLowering.cpp - while_loop nodes in a graph function -------===//
//
// How a graph function runs a `higher_order::while_loop` node
// (ir/WhileLoop.h): its cond and body subgraphs are compiled as graph
// functions of their own (as a cond's branches are, CondLowering.cpp), and
// the node becomes a loop:
//
//   carry = retained carried operands
//   loop:  pred = cond(carry..., additional...)
//          if not bool(pred): exit       (aten::is_nonzero, as eager reads it)
//          next = body(carry..., additional...)
//          release carry; carry = next
//   exit:  the node's results are carry
//
// Each carried value lives in a cell of its own that holds one reference;
// body borrows the carried values for the length of its call and returns
// new references, so the old carried tensors are released only after body
// has made the next ones (capture refuses a body that writes its inputs or
// returns one of them). A failing subgraph has written its message; its
// status becomes this function's, and the cleanup releases what the cells
// still hold.
//
//===----------------------------------------------------------------------===//

#include "codegen/GraphEmitter.h"
#include "ir/WhileLoop.h"

using namespace dync;
using namespace dync::codegen;
using namespace dync::codegen::detail;

void GraphEmitter::callSubgraph(const ir::Node& node, llvm::Function* fn, Value* inputs,
                                size_t numInputs, Value* outputs, size_t numOutputs,
                                const llvm::Twine& name) {
  llvm::PointerType* ptr = b_.getPtrTy();
  Value* status = b_.CreateCall(fn,
                                {inputs, b_.getInt64(numInputs),
                                 llvm::ConstantPointerNull::get(ptr), b_.getInt64(0), outputs,
                                 b_.getInt64(numOutputs), fn_->getArg(6), fn_->getArg(7)},
                                name + ".status");
  llvm::BasicBlock* saved = b_.GetInsertBlock();
  auto* failed = llvm::BasicBlock::Create(ctx_, name + ".failed." + node.name(), fn_);
  b_.SetInsertPoint(failed);
  reportSubgraphFailure(node, status, name + ".fall.back." + node.name());
  b_.CreateBr(cleanup_);
  b_.SetInsertPoint(saved);
  checkOrFail(b_.CreateICmpNE(status, b_.getInt32(DYNC_ARTIFACT_OK)), failed,
              name + ".ok." + node.name());
}

llvm::Error GraphEmitter::emitWhileLoop(const ir::Node& node, unsigned position) {
  llvm::Expected<llvm::Function*> condFn = subgraphFunction(node, ir::whileLoopCondName(node));
  if (!condFn)
    return condFn.takeError();
  llvm::Expected<llvm::Function*> bodyFn = subgraphFunction(node, ir::whileLoopBodyName(node));
  if (!bodyFn)
    return bodyFn.takeError();
  llvm::ArrayRef<ir::Argument> carried = ir::whileLoopCarried(node);
  llvm::ArrayRef<ir::Argument> additional = ir::whileLoopAdditional(node);
  size_t numInputs = carried.size() + additional.size();
  llvm::PointerType* ptr = b_.getPtrTy();
  llvm::AllocaInst* inputs =
      entryAlloca(ptr, allocas_.getInt64(std::max<size_t>(numInputs, 1)), "loop.inputs");
  llvm::AllocaInst* outputs =
      entryAlloca(ptr, allocas_.getInt64(std::max<size_t>(carried.size(), 1)), "loop.outputs");
  llvm::AllocaInst* predOutput = entryAlloca(ptr, nullptr, "loop.pred");

  // The carried values start as the operands, with a reference of the
  // loop's own; the additional inputs stay where they are.
  std::vector<Value*> cells;
  for (auto [k, operand] : llvm::enumerate(carried)) {
    llvm::Expected<const Slot*> slot = slotOf(&node, operand.valueRef());
    if (!slot)
      return slot.takeError();
    if ((*slot)->kind != SlotKind::Tensor)
      return unsupported(&node, "a carried value that is not a tensor");
    Value* handle = tensorHandle(**slot);
    shim_.call(b_, ShimFn::TensorRetain, {handle});
    cells.push_back(newCell("cell." + node.name() + "." + llvm::Twine(k)));
    b_.CreateStore(handle, cells.back());
  }
  for (auto [j, operand] : llvm::enumerate(additional)) {
    llvm::Expected<const Slot*> slot = slotOf(&node, operand.valueRef());
    if (!slot)
      return slot.takeError();
    if ((*slot)->kind != SlotKind::Tensor)
      return unsupported(&node, "an additional input that is not a tensor");
    b_.CreateStore(tensorHandle(**slot),
                   b_.CreateConstInBoundsGEP1_64(ptr, inputs, carried.size() + j));
  }
  Value* predCell = newCell("loop.pred.cell." + node.name());

  auto* head = llvm::BasicBlock::Create(ctx_, "loop.head." + node.name(), fn_);
  auto* body = llvm::BasicBlock::Create(ctx_, "loop.body." + node.name(), fn_);
  auto* exit = llvm::BasicBlock::Create(ctx_, "loop.exit." + node.name(), fn_);
  b_.CreateBr(head);

  // cond on the carried values, read as bool() reads a one-element tensor.
  b_.SetInsertPoint(head);
  for (auto [k, cell] : llvm::enumerate(cells))
    b_.CreateStore(b_.CreateLoad(ptr, cell), b_.CreateConstInBoundsGEP1_64(ptr, inputs, k));
  callSubgraph(node, *condFn, inputs, numInputs, predOutput, 1, "loop.cond");
  Value* pred = b_.CreateLoad(ptr, predOutput, "loop.pred.tensor");
  b_.CreateStore(pred, predCell);
  llvm::BasicBlock* fail = failBlock(nodePrefix(node), nullptr, /*shimError=*/true);
  Value* pushed = shim_.call(b_, ShimFn::PushTensor, {stack_, pred});
  checkOrFail(b_.CreateICmpNE(pushed, b_.getInt32(DYNC_OK)), fail, "loop.pushed." + node.name());
  Value* op = b_.CreateLoad(ptr, shim_.op("aten::is_nonzero.default"), "op");
  Value* called = shim_.call(b_, ShimFn::OpCall, {op, stack_}, "loop.truth." + node.name());
  checkOrFail(b_.CreateICmpNE(called, b_.getInt32(DYNC_OK)), fail, "loop.read." + node.name());
  llvm::AllocaInst* truth = entryAlloca(b_.getInt32Ty(), nullptr, "loop.truth");
  Value* took = shim_.call(b_, ShimFn::TakeBool, {stack_, b_.getInt64(0), truth});
  checkOrFail(b_.CreateICmpNE(took, b_.getInt32(DYNC_OK)), fail, "loop.took." + node.name());
  shim_.call(b_, ShimFn::TensorRelease, {pred});
  b_.CreateStore(llvm::ConstantPointerNull::get(ptr), predCell);
  b_.CreateCondBr(b_.CreateICmpNE(b_.CreateLoad(b_.getInt32Ty(), truth), b_.getInt32(0)), body,
                  exit);

  // body makes the next carried values before the current ones go. (The
  // blocks are kept in reading order.)
  body->moveAfter(b_.GetInsertBlock());
  b_.SetInsertPoint(body);
  callSubgraph(node, *bodyFn, inputs, numInputs, outputs, carried.size(), "loop.body");
  for (auto [k, cell] : llvm::enumerate(cells)) {
    shim_.call(b_, ShimFn::TensorRelease, {b_.CreateLoad(ptr, cell)});
    b_.CreateStore(b_.CreateLoad(ptr, b_.CreateConstInBoundsGEP1_64(ptr, outputs, k)), cell);
  }
  b_.CreateBr(head);

  exit->moveAfter(b_.GetInsertBlock());
  b_.SetInsertPoint(exit);
  NodeValues& values = values_[&node];
  values.sequence = true;
  for (Value* cell : cells) {
    Slot slot;
    slot.kind = SlotKind::Tensor;
    slot.cell = cell;
    values.slots.push_back(slot);
  }
  releaseDead(node, position);
  return llvm::Error::success();
}
