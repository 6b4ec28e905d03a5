//===- ScalarLowering.cpp - Floats and bools computed from tensor data ----===//
//
// A graph's `float` and `bool` values (item() of a float or bool tensor,
// ir/ScalarOps.h) are SSA values of the graph function: a double, or an
// i32 that is 0 or 1 as the shim's bools are. `sym::NAME.default` nodes
// compute Python's operation on them inline; no shim call is involved. A
// returned one leaves the function as a 0-dim tensor (float64 or bool, which
// hold it exactly; int64 for a returned data-dependent int), which the rewritten bytecode turns
// back into the Python number with item() (docs/rewrite.md).
//
//===----------------------------------------------------------------------===//

#include "codegen/GraphEmitter.h"
#include "ir/ScalarOps.h"
#include "runtime/shim/dync_shim.h"

#include "llvm/IR/Intrinsics.h"

using namespace dync;
using namespace dync::codegen;
using namespace dync::codegen::detail;

llvm::Expected<Value*> GraphEmitter::scalarOperand(const ir::Node& node, const ir::Argument& arg,
                                                   SlotKind& kind) {
  switch (arg.kind()) {
  case ir::Argument::Kind::Float:
    kind = SlotKind::Double;
    return llvm::ConstantFP::get(b_.getDoubleTy(), arg.floatValue());
  case ir::Argument::Kind::Bool:
    kind = SlotKind::Bool;
    return b_.getInt32(arg.boolValue());
  case ir::Argument::Kind::Sym:
    kind = SlotKind::Int;
    return emitSym(&node, arg.symValue());
  case ir::Argument::Kind::Value: {
    llvm::Expected<const Slot*> slot = slotOf(&node, arg.valueRef());
    if (!slot)
      return slot.takeError();
    kind = (*slot)->kind;
    if (kind == SlotKind::Int || kind == SlotKind::Double || kind == SlotKind::Bool)
      return (*slot)->value;
    break;
  }
  default:
    break;
  }
  return unsupported(&node, "an operand that is not a number");
}

namespace {

llvm::CmpInst::Predicate comparison(ir::ScalarOp op, bool floating) {
  using P = llvm::CmpInst::Predicate;
  switch (op) {
  case ir::ScalarOp::Lt:
    return floating ? P::FCMP_OLT : P::ICMP_SLT;
  case ir::ScalarOp::Le:
    return floating ? P::FCMP_OLE : P::ICMP_SLE;
  case ir::ScalarOp::Gt:
    return floating ? P::FCMP_OGT : P::ICMP_SGT;
  case ir::ScalarOp::Ge:
    return floating ? P::FCMP_OGE : P::ICMP_SGE;
  case ir::ScalarOp::Eq:
    return floating ? P::FCMP_OEQ : P::ICMP_EQ;
  default:
    // `nan != nan` is true in Python: unordered or not equal.
    return floating ? P::FCMP_UNE : P::ICMP_NE;
  }
}

} // namespace

void GraphEmitter::raiseIf(const ir::Node& node, Value* failed, llvm::StringRef text,
                           const llvm::Twine& name) {
  checkOrFail(failed, checkFailBlock(node, text), name);
}

llvm::Expected<Value*> GraphEmitter::floatScalarOp(const ir::Node& node, ir::ScalarOp op,
                                                   llvm::ArrayRef<ScalarNumber> operands) {
  bool floating =
      llvm::any_of(operands, [](const ScalarNumber& n) { return n.kind == SlotKind::Double; });
  auto dbl = [&](unsigned i) { return scalarAsDouble(b_, operands[i].kind, operands[i].value); };
  switch (op) {
  case ir::ScalarOp::Add:
    return b_.CreateFAdd(dbl(0), dbl(1), node.name());
  case ir::ScalarOp::Sub:
    return b_.CreateFSub(dbl(0), dbl(1), node.name());
  case ir::ScalarOp::Mul:
    return b_.CreateFMul(dbl(0), dbl(1), node.name());
  case ir::ScalarOp::TrueDiv: {
    Value* divisor = dbl(1);
    // Python raises where IEEE division would give an infinity or a NaN.
    raiseIf(node, b_.CreateFCmpOEQ(divisor, llvm::ConstantFP::get(b_.getDoubleTy(), 0.0)),
            floating ? "ZeroDivisionError: float division by zero"
                     : "ZeroDivisionError: division by zero",
            "divisor.ok." + node.name());
    return b_.CreateFDiv(dbl(0), divisor, node.name());
  }
  case ir::ScalarOp::Neg:
    return b_.CreateFNeg(dbl(0), node.name());
  case ir::ScalarOp::Pos:
  case ir::ScalarOp::Float:
    return dbl(0);
  case ir::ScalarOp::Abs:
    return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, dbl(0), nullptr, node.name());
  case ir::ScalarOp::Pow:
    return floatPow(node, dbl(0), dbl(1));
  case ir::ScalarOp::FloorDiv:
  case ir::ScalarOp::Mod:
    return floatFloorDivMod(node, op, dbl(0), dbl(1));
  case ir::ScalarOp::Sqrt:
  case ir::ScalarOp::Exp:
  case ir::ScalarOp::Log:
    return floatMath(node, op, dbl(0));
  case ir::ScalarOp::Round: {
    // round(x, ndigits): CPython's correctly rounded decimal steps, in the
    // shim (dync_round_digits).
    if (operands.size() != 2 || operands[1].kind == SlotKind::Double)
      return unsupported(&node, "round() of a float to a number of digits that is no int");
    Value* overflow = entryAlloca(b_.getInt32Ty(), nullptr, "overflow." + node.name());
    Value* rounded = shim_.call(
        b_, ShimFn::RoundDigits,
        {dbl(0), scalarAsInt(b_, operands[1].kind, operands[1].value), overflow}, node.name());
    raiseIf(node, b_.CreateICmpNE(b_.CreateLoad(b_.getInt32Ty(), overflow), b_.getInt32(0)),
            "OverflowError: rounded value too large to represent", "round.range." + node.name());
    return rounded;
  }
  default:
    return unsupported(&node, "this operation giving a float");
  }
}

llvm::Error GraphEmitter::emitScalarOp(const ir::Node& node) {
  std::optional<ir::ScalarOp> op = ir::scalarOpOf(node);
  if (!op || !ir::checkScalarOp(node).empty())
    return unsupported(&node, "this form of the operation");
  std::vector<ScalarNumber> operands;
  for (const ir::Argument& arg : node.args()) {
    SlotKind kind = SlotKind::None;
    llvm::Expected<Value*> value = scalarOperand(node, arg, kind);
    if (!value)
      return value.takeError();
    operands.push_back({kind, *value});
  }
  Slot slot;
  llvm::Expected<Value*> result = nullptr;
  if (ir::scalarOpGivesBool(*op) && node.type().kind() != ir::Type::Kind::Int) {
    slot.kind = SlotKind::Bool;
    result = boolScalarOp(node, *op, operands);
  } else if (node.type().kind() == ir::Type::Kind::Int) {
    slot.kind = SlotKind::Int;
    result = *op == ir::ScalarOp::Round && operands.size() == 2 ? intRoundDigits(node, operands)
             : ir::scalarOpGivesInt(*op) ? scalarToInt(node, *op, operands[0])
                                         : intScalarOp(node, *op, operands);
  } else {
    slot.kind = SlotKind::Double;
    result = floatScalarOp(node, *op, operands);
  }
  if (!result)
    return result.takeError();
  slot.value = *result;
  values_[&node].slots.push_back(slot);
  // An int result is a symbol later sizes and arguments use.
  return bindUnbacked(node);
}

llvm::Expected<Value*> GraphEmitter::boolScalarOp(const ir::Node& node, ir::ScalarOp op,
                                                  llvm::ArrayRef<ScalarNumber> operands) {
  if (op == ir::ScalarOp::And || op == ir::ScalarOp::Or || op == ir::ScalarOp::Xor) {
    if (operands[0].kind != SlotKind::Bool || operands[1].kind != SlotKind::Bool)
      return unsupported(&node, "&, | or ^ of numbers other than bools");
    Value* a = operands[0].value;
    Value* b = operands[1].value;
    return op == ir::ScalarOp::And  ? b_.CreateAnd(a, b, node.name())
           : op == ir::ScalarOp::Or ? b_.CreateOr(a, b, node.name())
                                    : b_.CreateXor(a, b, node.name());
  }
  bool floating =
      llvm::any_of(operands, [](const ScalarNumber& n) { return n.kind == SlotKind::Double; });
  llvm::CmpInst::Predicate predicate = comparison(op, floating);
  Value* holds =
      floating ? b_.CreateFCmp(predicate, scalarAsDouble(b_, operands[0].kind, operands[0].value),
                               scalarAsDouble(b_, operands[1].kind, operands[1].value))
               : b_.CreateICmp(predicate, scalarAsInt(b_, operands[0].kind, operands[0].value),
                               scalarAsInt(b_, operands[1].kind, operands[1].value));
  return b_.CreateZExt(holds, b_.getInt32Ty(), node.name());
}

llvm::Expected<Value*> GraphEmitter::scalarTensor(const Slot& slot) {
  // aten::scalar_tensor(Scalar s, *, ScalarType? dtype, Layout? layout,
  // Device? device, bool? pin_memory): a new 0-dim tensor of the number.
  int dtype = DYNC_DTYPE_BOOL;
  if (slot.kind == SlotKind::Double) {
    shim_.call(b_, ShimFn::PushDouble, {stack_, slot.value});
    dtype = DYNC_DTYPE_FLOAT64;
  } else if (slot.kind == SlotKind::Int) {
    shim_.call(b_, ShimFn::PushInt, {stack_, slot.value});
    dtype = DYNC_DTYPE_INT64;
  } else {
    shim_.call(b_, ShimFn::PushBool, {stack_, slot.value});
  }
  shim_.call(b_, ShimFn::PushDType, {stack_, b_.getInt32(dtype)});
  for (int i = 0; i < 3; ++i)
    shim_.call(b_, ShimFn::PushDefault, {stack_});
  Value* handle = b_.CreateLoad(b_.getPtrTy(), shim_.op("aten::scalar_tensor.default"), "op");
  Value* status = shim_.call(b_, ShimFn::OpCall, {handle, stack_}, "status.scalar");
  llvm::BasicBlock* fail = failBlock(
      "graph " + graph_.name() + ", return: making a tensor of a returned number: ", nullptr,
      /*shimError=*/true);
  checkOrFail(b_.CreateICmpNE(status, b_.getInt32(DYNC_OK)), fail, "called.scalar");
  Value* cell = newCell("cell.returned");
  status = shim_.call(b_, ShimFn::TakeTensor, {stack_, b_.getInt64(0), cell}, "took");
  checkOrFail(b_.CreateICmpNE(status, b_.getInt32(DYNC_OK)), fail, "took.scalar");
  return b_.CreateLoad(b_.getPtrTy(), cell, "returned");
}
