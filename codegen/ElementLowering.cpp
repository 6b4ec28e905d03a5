//===- ElementLowering.cpp - One element of a kernel node in LLVM IR ------===//
#include "codegen/ElementLowering.h"

#include "codegen/KernelMath.h"

#include "llvm/IR/Intrinsics.h"

#include <cmath>
#include <limits>

using namespace dync;
using namespace dync::codegen;
using ir::DType;
using ir::ElementOp;
using llvm::Value;

namespace {

bool isFloat(DType dtype) { return dtype == DType::F32 || dtype == DType::F64; }

llvm::Error notLowered(ElementOp op, DType dtype) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "no lowering of " +
                                                                     ir::spelling(op) + " for " +
                                                                     ir::spelling(dtype));
}

Value* floatConstant(llvm::IRBuilder<>& b, DType dtype, double v) {
  return llvm::ConstantFP::get(computeType(b.getContext(), dtype), v);
}

/// a < b ? ... comparisons by dtype: ordered for floats (NaN compares
/// false, except !=), signed for ints, unsigned for bool.
Value* compare(llvm::IRBuilder<>& b, ElementOp op, DType dtype, Value* x, Value* y) {
  using P = llvm::CmpInst::Predicate;
  bool fp = isFloat(dtype);
  bool isBool = dtype == DType::Bool;
  P pred;
  switch (op) {
  case ElementOp::Eq:
    pred = fp ? P::FCMP_OEQ : P::ICMP_EQ;
    break;
  case ElementOp::Ne:
    pred = fp ? P::FCMP_UNE : P::ICMP_NE;
    break;
  case ElementOp::Lt:
    pred = fp ? P::FCMP_OLT : isBool ? P::ICMP_ULT : P::ICMP_SLT;
    break;
  case ElementOp::Le:
    pred = fp ? P::FCMP_OLE : isBool ? P::ICMP_ULE : P::ICMP_SLE;
    break;
  case ElementOp::Gt:
    pred = fp ? P::FCMP_OGT : isBool ? P::ICMP_UGT : P::ICMP_SGT;
    break;
  default:
    pred = fp ? P::FCMP_OGE : isBool ? P::ICMP_UGE : P::ICMP_SGE;
    break;
  }
  return fp ? b.CreateFCmp(pred, x, y) : b.CreateICmp(pred, x, y);
}

} // namespace

llvm::Type* codegen::computeType(llvm::LLVMContext& ctx, DType dtype) {
  switch (dtype) {
  case DType::F32:
    return llvm::Type::getFloatTy(ctx);
  case DType::F64:
    return llvm::Type::getDoubleTy(ctx);
  case DType::I64:
    return llvm::Type::getInt64Ty(ctx);
  case DType::I32:
    return llvm::Type::getInt32Ty(ctx);
  case DType::Bool:
    return llvm::Type::getInt1Ty(ctx);
  default:
    return nullptr;
  }
}

llvm::Type* codegen::storageType(llvm::LLVMContext& ctx, DType dtype) {
  return dtype == DType::Bool ? llvm::Type::getInt8Ty(ctx) : computeType(ctx, dtype);
}

Value* codegen::convert(llvm::IRBuilder<>& b, TypedValue v, DType to) {
  if (v.dtype == to)
    return v.value;
  llvm::Type* target = computeType(b.getContext(), to);
  if (to == DType::Bool)
    return isFloat(v.dtype)
               ? b.CreateFCmpUNE(v.value, llvm::ConstantFP::get(v.value->getType(), 0))
               : b.CreateICmpNE(v.value, llvm::ConstantInt::get(v.value->getType(), 0));
  if (v.dtype == DType::Bool)
    return isFloat(to) ? b.CreateUIToFP(v.value, target) : b.CreateZExt(v.value, target);
  if (isFloat(v.dtype) && isFloat(to))
    return b.CreateFPCast(v.value, target);
  if (!isFloat(v.dtype) && !isFloat(to))
    return b.CreateSExtOrTrunc(v.value, target);
  if (!isFloat(v.dtype))
    return b.CreateSIToFP(v.value, target);
  return b.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {target, v.value->getType()}, {v.value});
}

llvm::Expected<TypedValue> codegen::lowerElement(llvm::IRBuilder<>& b, ElementOp op,
                                                 llvm::ArrayRef<std::optional<TypedValue>> operands,
                                                 DType result) {
  auto in = [&](size_t i, DType dtype) { return convert(b, *operands[i], dtype); };
  auto done = [&](Value* v) -> llvm::Expected<TypedValue> { return TypedValue{v, result}; };

  if (ir::isComparison(op)) {
    DType common = operands[0]->dtype;
    return done(compare(b, op, common, in(0, common), in(1, common)));
  }
  switch (op) {
  case ElementOp::LogicalAnd:
    return done(b.CreateAnd(in(0, DType::Bool), in(1, DType::Bool)));
  case ElementOp::LogicalOr:
    return done(b.CreateOr(in(0, DType::Bool), in(1, DType::Bool)));
  case ElementOp::LogicalXor:
    return done(b.CreateXor(in(0, DType::Bool), in(1, DType::Bool)));
  case ElementOp::LogicalNot:
    return done(b.CreateNot(in(0, DType::Bool)));
  case ElementOp::Where:
    return done(b.CreateSelect(in(0, DType::Bool), in(1, result), in(2, result)));
  case ElementOp::Convert:
    return done(in(0, result));
  default:
    break;
  }

  Value* x = in(0, result);
  bool fp = isFloat(result);
  if (result == DType::Bool)
    return notLowered(op, result);
  switch (op) {
  case ElementOp::Add:
  case ElementOp::Sub: {
    Value* y = in(1, result);
    if (operands.size() > 2 && operands[2])
      y = fp ? b.CreateFMul(in(2, result), y) : b.CreateMul(in(2, result), y);
    if (op == ElementOp::Add)
      return done(fp ? b.CreateFAdd(x, y) : b.CreateAdd(x, y));
    return done(fp ? b.CreateFSub(x, y) : b.CreateSub(x, y));
  }
  case ElementOp::Mul:
    return done(fp ? b.CreateFMul(x, in(1, result)) : b.CreateMul(x, in(1, result)));
  case ElementOp::Square:
    return done(fp ? b.CreateFMul(x, x) : b.CreateMul(x, x));
  case ElementOp::Neg:
    return done(fp ? b.CreateFNeg(x) : b.CreateNeg(x));
  case ElementOp::Abs:
    return done(fp ? b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x)
                   : b.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, b.getFalse()));
  case ElementOp::Relu:
    // Like clamp_min(x, 0): NaN stays NaN.
    if (fp)
      return done(b.CreateSelect(b.CreateFCmpOLT(x, floatConstant(b, result, 0.0)),
                                 floatConstant(b, result, 0.0), x));
    return done(
        b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, x, llvm::ConstantInt::get(x->getType(), 0)));
  case ElementOp::Maximum:
    return done(b.CreateBinaryIntrinsic(fp ? llvm::Intrinsic::maximum : llvm::Intrinsic::smax, x,
                                        in(1, result)));
  case ElementOp::Minimum:
    return done(b.CreateBinaryIntrinsic(fp ? llvm::Intrinsic::minimum : llvm::Intrinsic::smin, x,
                                        in(1, result)));
  case ElementOp::Clamp: {
    // min(max(x, lo), hi); a NaN x stays NaN, and hi wins when lo > hi.
    Value* r = x;
    if (operands[1]) {
      Value* lo = in(1, result);
      r = fp ? b.CreateSelect(b.CreateFCmpOLT(r, lo), lo, r)
             : b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, r, lo);
    }
    if (operands[2]) {
      Value* hi = in(2, result);
      r = fp ? b.CreateSelect(b.CreateFCmpOGT(r, hi), hi, r)
             : b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, r, hi);
    }
    return done(r);
  }
  default:
    break;
  }

  // Float-only operations.
  if (!fp)
    return notLowered(op, result);
  switch (op) {
  case ElementOp::Div:
    return done(b.CreateFDiv(x, in(1, result)));
  case ElementOp::DivTrunc:
    return done(b.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, b.CreateFDiv(x, in(1, result))));
  case ElementOp::Reciprocal:
    return done(b.CreateFDiv(floatConstant(b, result, 1.0), x));
  case ElementOp::Sqrt:
    return done(b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x));
  case ElementOp::Rsqrt:
    return done(b.CreateFDiv(floatConstant(b, result, 1.0),
                             b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x)));
  case ElementOp::Exp:
    return done(emitExp(b, x));
  case ElementOp::Log:
    return done(emitLog(b, x));
  case ElementOp::Tanh:
    return done(emitTanh(b, x));
  case ElementOp::Sigmoid:
    return done(emitSigmoid(b, x));
  case ElementOp::Erf:
    return done(emitErf(b, x));
  case ElementOp::Gelu: {
    auto c = [&](double d) { return floatConstant(b, result, d); };
    Value* e = emitErf(b, b.CreateFMul(x, c(M_SQRT1_2)));
    return done(b.CreateFMul(b.CreateFMul(c(0.5), x), b.CreateFAdd(c(1.0), e)));
  }
  case ElementOp::GeluTanh: {
    auto c = [&](double d) { return floatConstant(b, result, d); };
    Value* cube = b.CreateFMul(b.CreateFMul(x, x), x);
    Value* inner =
        b.CreateFMul(c(M_2_SQRTPI * M_SQRT1_2), b.CreateFAdd(x, b.CreateFMul(c(0.044715), cube)));
    return done(b.CreateFMul(b.CreateFMul(c(0.5), x), b.CreateFAdd(c(1.0), emitTanh(b, inner))));
  }
  default:
    return notLowered(op, result);
  }
}

DType codegen::accumulatorDType(ElementOp op, DType result) {
  if ((op == ElementOp::Sum || op == ElementOp::Mean) && isFloat(result))
    return DType::F64;
  return result;
}

Value* codegen::reductionInit(llvm::IRBuilder<>& b, ElementOp op, DType accumulator) {
  llvm::Type* type = computeType(b.getContext(), accumulator);
  bool fp = isFloat(accumulator);
  switch (op) {
  case ElementOp::Amax:
    return fp ? llvm::ConstantFP::getInfinity(type, /*Negative=*/true)
              : llvm::ConstantInt::get(type,
                                       llvm::APInt::getSignedMinValue(type->getIntegerBitWidth()));
  case ElementOp::Amin:
    return fp ? llvm::ConstantFP::getInfinity(type, /*Negative=*/false)
              : llvm::ConstantInt::get(type,
                                       llvm::APInt::getSignedMaxValue(type->getIntegerBitWidth()));
  default:
    return llvm::Constant::getNullValue(type);
  }
}

Value* codegen::reductionCombine(llvm::IRBuilder<>& b, ElementOp op, DType accumulator, Value* acc,
                                 Value* element) {
  bool fp = isFloat(accumulator);
  switch (op) {
  case ElementOp::Amax:
    return b.CreateBinaryIntrinsic(fp ? llvm::Intrinsic::maximum : llvm::Intrinsic::smax, acc,
                                   element);
  case ElementOp::Amin:
    return b.CreateBinaryIntrinsic(fp ? llvm::Intrinsic::minimum : llvm::Intrinsic::smin, acc,
                                   element);
  default:
    if (!fp)
      return b.CreateAdd(acc, element);
    {
      llvm::FastMathFlags flags;
      flags.setAllowReassoc();
      auto* sum = llvm::cast<llvm::Instruction>(b.CreateFAdd(acc, element));
      sum->setFastMathFlags(flags);
      return sum;
    }
  }
}
