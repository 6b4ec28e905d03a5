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

namespace {

/// One operand, as the number it is.
struct Number {
  SlotKind kind; // Int, Double or Bool
  Value* value;  // i64, double, i32
};

} // namespace

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

/// \p n as a double, converted as Python's float() converts an int or bool.
Value* asDouble(IRBuilder<>& b, SlotKind kind, Value* n) {
  switch (kind) {
  case SlotKind::Double:
    return n;
  case SlotKind::Bool:
    return b.CreateUIToFP(n, b.getDoubleTy());
  default:
    return b.CreateSIToFP(n, b.getDoubleTy());
  }
}

/// \p n as an i64 (a bool is 0 or 1).
Value* asInt(IRBuilder<>& b, SlotKind kind, Value* n) {
  return kind == SlotKind::Bool ? b.CreateZExt(n, b.getInt64Ty()) : n;
}

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

llvm::Error GraphEmitter::emitScalarOp(const ir::Node& node) {
  std::optional<ir::ScalarOp> op = ir::scalarOpOf(node);
  bool givesBool = op && ir::scalarOpGivesBool(*op);
  ir::Type::Kind want = givesBool ? ir::Type::Kind::Bool : ir::Type::Kind::Float;
  if (!op || node.type().kind() != want || node.args().size() != ir::scalarOpArity(*op) ||
      !node.kwargs().empty())
    return unsupported(&node, "this form of the operation");
  std::vector<Number> operands;
  for (const ir::Argument& arg : node.args()) {
    SlotKind kind = SlotKind::None;
    llvm::Expected<Value*> value = scalarOperand(node, arg, kind);
    if (!value)
      return value.takeError();
    operands.push_back({kind, *value});
  }
  bool floating =
      llvm::any_of(operands, [](const Number& n) { return n.kind == SlotKind::Double; });
  auto dbl = [&](unsigned i) { return asDouble(b_, operands[i].kind, operands[i].value); };
  Value* result = nullptr;
  switch (*op) {
  case ir::ScalarOp::Add:
    result = b_.CreateFAdd(dbl(0), dbl(1), node.name());
    break;
  case ir::ScalarOp::Sub:
    result = b_.CreateFSub(dbl(0), dbl(1), node.name());
    break;
  case ir::ScalarOp::Mul:
    result = b_.CreateFMul(dbl(0), dbl(1), node.name());
    break;
  case ir::ScalarOp::TrueDiv: {
    Value* divisor = dbl(1);
    // Python raises where IEEE division would give an infinity or a NaN.
    const char* message = floating ? "ZeroDivisionError: float division by zero"
                                   : "ZeroDivisionError: division by zero";
    checkOrFail(b_.CreateFCmpOEQ(divisor, llvm::ConstantFP::get(b_.getDoubleTy(), 0.0)),
                checkFailBlock(node, message), "divisor.ok." + node.name());
    result = b_.CreateFDiv(dbl(0), divisor, node.name());
    break;
  }
  case ir::ScalarOp::Neg:
    result = b_.CreateFNeg(dbl(0), node.name());
    break;
  case ir::ScalarOp::Pos:
  case ir::ScalarOp::Float:
    result = dbl(0);
    break;
  case ir::ScalarOp::Abs:
    result = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, dbl(0), nullptr, node.name());
    break;
  case ir::ScalarOp::And:
  case ir::ScalarOp::Or:
  case ir::ScalarOp::Xor: {
    if (operands[0].kind != SlotKind::Bool || operands[1].kind != SlotKind::Bool)
      return unsupported(&node, "&, | or ^ of numbers other than bools");
    Value* a = operands[0].value;
    Value* b = operands[1].value;
    result = *op == ir::ScalarOp::And  ? b_.CreateAnd(a, b, node.name())
             : *op == ir::ScalarOp::Or ? b_.CreateOr(a, b, node.name())
                                       : b_.CreateXor(a, b, node.name());
    break;
  }
  default: {
    llvm::CmpInst::Predicate predicate = comparison(*op, floating);
    Value* holds = floating
                       ? b_.CreateFCmp(predicate, dbl(0), dbl(1))
                       : b_.CreateICmp(predicate, asInt(b_, operands[0].kind, operands[0].value),
                                       asInt(b_, operands[1].kind, operands[1].value));
    result = b_.CreateZExt(holds, b_.getInt32Ty(), node.name());
    break;
  }
  }
  Slot slot;
  slot.kind = givesBool ? SlotKind::Bool : SlotKind::Double;
  slot.value = result;
  values_[&node].slots.push_back(slot);
  return llvm::Error::success();
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
