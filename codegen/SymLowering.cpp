//===- SymLowering.cpp - Symbolic sizes to LLVM IR ------------------------===//

#include "codegen/SymLowering.h"

#include "llvm/IR/Intrinsics.h"

#include <limits>

using namespace dync;
using namespace dync::codegen;
using llvm::Value;

llvm::Expected<Value*> SymLowering::lower(llvm::IRBuilder<>& b, ir::SymExpr expr) {
  if (Value* known = values_.lookup(expr))
    return known;
  Value* result = nullptr;
  switch (expr.kind()) {
  case ir::SymKind::Const:
    result = b.getInt64(expr.constantValue());
    break;
  case ir::SymKind::Symbol: {
    llvm::Expected<Value*> value = hooks_.symbol(expr);
    if (!value)
      return value.takeError();
    result = *value;
    break;
  }
  case ir::SymKind::Add:
  case ir::SymKind::Mul:
  case ir::SymKind::Min:
  case ir::SymKind::Max:
  case ir::SymKind::FloorDiv:
  case ir::SymKind::Mod: {
    llvm::SmallVector<Value*, 4> operands;
    for (ir::SymExpr operand : expr.operands()) {
      llvm::Expected<Value*> value = lower(b, operand);
      if (!value)
        return value.takeError();
      operands.push_back(*value);
    }
    if (expr.kind() == ir::SymKind::FloorDiv || expr.kind() == ir::SymKind::Mod) {
      result = divide(b, expr, operands[0], operands[1]);
      break;
    }
    result = operands[0];
    for (Value* operand : llvm::drop_begin(operands))
      result = combine(b, expr, result, operand);
    break;
  }
  }
  values_[expr] = result;
  return result;
}

Value* SymLowering::combine(llvm::IRBuilder<>& b, ir::SymExpr expr, Value* lhs, Value* rhs) {
  // A compare and a select, which LLVM's combiner turns into smin/smax.
  if (expr.kind() == ir::SymKind::Min)
    return b.CreateSelect(b.CreateICmpSLT(rhs, lhs), rhs, lhs);
  if (expr.kind() == ir::SymKind::Max)
    return b.CreateSelect(b.CreateICmpSGT(rhs, lhs), rhs, lhs);
  bool isAdd = expr.kind() == ir::SymKind::Add;
  switch (arithmetic_) {
  case Arithmetic::Wrapping:
    return isAdd ? b.CreateAdd(lhs, rhs) : b.CreateMul(lhs, rhs);
  case Arithmetic::NoSignedWrap:
    return isAdd ? b.CreateNSWAdd(lhs, rhs) : b.CreateNSWMul(lhs, rhs);
  case Arithmetic::Checked: {
    Value* pair = b.CreateBinaryIntrinsic(isAdd ? llvm::Intrinsic::sadd_with_overflow
                                                : llvm::Intrinsic::smul_with_overflow,
                                          lhs, rhs);
    hooks_.require(b, b.CreateNot(b.CreateExtractValue(pair, 1)), SymCheck::Overflow, expr);
    return b.CreateExtractValue(pair, 0);
  }
  }
  llvm_unreachable("every kind of arithmetic is handled");
}

Value* SymLowering::divide(llvm::IRBuilder<>& b, ir::SymExpr expr, Value* a, Value* d) {
  bool isFloorDiv = expr.kind() == ir::SymKind::FloorDiv;
  ir::SymExpr divisor = expr.operands()[1];
  bool mayBeZero = !divisor.isConstant() || divisor.constantValue() == 0;
  bool mayBeMinusOne = !divisor.isConstant() || divisor.constantValue() == -1;

  // A divisor that would trap the machine's division: zero, and -1 (for
  // INT64_MIN / -1), which is special cased below.
  Value* unsafe = nullptr;
  if (mayBeZero) {
    if (checkDivisor_)
      hooks_.require(b, b.CreateICmpNE(d, b.getInt64(0)), SymCheck::DivisionByZero, expr);
    else
      unsafe = b.CreateICmpEQ(d, b.getInt64(0));
  }
  Value* minusOne = mayBeMinusOne ? b.CreateICmpEQ(d, b.getInt64(-1)) : nullptr;
  // INT64_MIN // -1 does not fit; elsewhere it wraps to INT64_MIN, as -a.
  if (isFloorDiv && minusOne && arithmetic_ == Arithmetic::Checked)
    hooks_.require(
        b,
        b.CreateNot(b.CreateAnd(
            minusOne, b.CreateICmpEQ(a, b.getInt64(std::numeric_limits<int64_t>::min())))),
        SymCheck::Overflow, expr);
  if (minusOne)
    unsafe = unsafe ? b.CreateOr(unsafe, minusOne) : minusOne;
  Value* safeD = unsafe ? b.CreateSelect(unsafe, b.getInt64(1), d) : d;

  // Python's semantics: the quotient rounds toward negative infinity and the
  // remainder takes the divisor's sign; C's truncating division is adjusted
  // when the remainder is nonzero and its sign differs from the divisor's.
  Value* q = b.CreateSDiv(a, safeD);
  Value* r = b.CreateSRem(a, safeD);
  Value* adjust = b.CreateAnd(b.CreateICmpNE(r, b.getInt64(0)),
                              b.CreateICmpSLT(b.CreateXor(r, d), b.getInt64(0)));
  if (isFloorDiv) {
    Value* result = b.CreateSelect(adjust, b.CreateSub(q, b.getInt64(1)), q, "floordiv");
    return minusOne ? b.CreateSelect(minusOne, b.CreateNeg(a), result, "floordiv") : result;
  }
  Value* result = b.CreateSelect(adjust, b.CreateAdd(r, d), r, "mod");
  return minusOne ? b.CreateSelect(minusOne, b.getInt64(0), result, "mod") : result;
}

llvm::Expected<llvm::Value*>
dync::codegen::lowerRelation(llvm::IRBuilder<>& b, const ir::Relation& relation,
                             llvm::function_ref<llvm::Expected<llvm::Value*>(ir::SymExpr)> side) {
  llvm::Value* holds = nullptr;
  for (const ir::Comparison& comparison : relation.comparisons()) {
    llvm::Expected<llvm::Value*> lhs = side(comparison.lhs);
    if (!lhs)
      return lhs.takeError();
    llvm::Expected<llvm::Value*> rhs = side(comparison.rhs);
    if (!rhs)
      return rhs.takeError();
    llvm::CmpInst::Predicate predicate = llvm::CmpInst::ICMP_EQ;
    switch (comparison.kind) {
    case ir::RelationKind::Eq:
      predicate = llvm::CmpInst::ICMP_EQ;
      break;
    case ir::RelationKind::Ne:
      predicate = llvm::CmpInst::ICMP_NE;
      break;
    case ir::RelationKind::Lt:
      predicate = llvm::CmpInst::ICMP_SLT;
      break;
    case ir::RelationKind::Le:
      predicate = llvm::CmpInst::ICMP_SLE;
      break;
    case ir::RelationKind::Gt:
      predicate = llvm::CmpInst::ICMP_SGT;
      break;
    case ir::RelationKind::Ge:
      predicate = llvm::CmpInst::ICMP_SGE;
      break;
    }
    llvm::Value* one = b.CreateICmp(predicate, *lhs, *rhs, "relation.holds");
    holds = holds ? b.CreateOr(holds, one, "relation.any") : one;
  }
  return holds;
}
