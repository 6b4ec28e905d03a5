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

bool codegen::isReducedFloat(DType dtype) { return dtype == DType::BF16 || dtype == DType::F16; }

namespace {

bool isFloat(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F64 || codegen::isReducedFloat(dtype);
}

// bf16 and f16 conversions in integer operations, so they vectorize on
// every target and need no library (LLVM lowers `half` conversions to calls
// where the CPU lacks F16C). f32 values travel as i32 bit patterns here.

Value* bitsOf(llvm::IRBuilder<>& b, Value* f) { return b.CreateBitCast(f, b.getInt32Ty()); }
Value* floatOf(llvm::IRBuilder<>& b, Value* bits) { return b.CreateBitCast(bits, b.getFloatTy()); }
Value* i32(llvm::IRBuilder<>& b, uint32_t v) { return b.getInt32(v); }

/// bf16 is the upper half of an f32: widening is a shift.
Value* bf16ToFloat(llvm::IRBuilder<>& b, Value* h) {
  return floatOf(b, b.CreateShl(b.CreateZExt(h, b.getInt32Ty()), 16));
}

/// f32 to bf16 bits (in the low half of an i32), rounding to nearest even:
/// adding 0x7fff plus the kept part's lowest bit carries into the kept
/// part exactly when the dropped half is above one half, or equal to it
/// with an odd kept part; a carry out of the mantissa bumps the exponent,
/// up to infinity. NaN stays NaN (quieted, sign and high payload kept)
/// rather than rounding into infinity.
Value* floatToBF16Bits(llvm::IRBuilder<>& b, Value* f) {
  Value* bits = bitsOf(b, f);
  Value* lsb = b.CreateAnd(b.CreateLShr(bits, 16), i32(b, 1));
  Value* rounded = b.CreateLShr(b.CreateAdd(bits, b.CreateAdd(lsb, i32(b, 0x7fff))), 16);
  Value* nan = b.CreateOr(b.CreateLShr(bits, 16), i32(b, 0x40));
  return b.CreateSelect(b.CreateFCmpUNO(f, f), nan, rounded);
}

/// f16 bits (zero-extended to i32) to f32, exactly. Normal numbers rebias
/// the exponent (15 to 127); subnormals and zero are their 10-bit integer
/// times 2^-24, which int-to-float computes exactly; inf and NaN keep
/// their payload under the all-ones f32 exponent.
Value* f16ToFloat(llvm::IRBuilder<>& b, Value* h) {
  Value* h32 = b.CreateZExt(h, b.getInt32Ty());
  Value* sign = b.CreateShl(b.CreateAnd(h32, i32(b, 0x8000)), 16);
  Value* magnitude = b.CreateAnd(h32, i32(b, 0x7fff));
  Value* exponent = b.CreateAnd(magnitude, i32(b, 0x7c00));
  Value* shifted = b.CreateShl(magnitude, 13);
  Value* normal = b.CreateAdd(shifted, i32(b, (127 - 15) << 23));
  Value* special = b.CreateOr(shifted, i32(b, 0x7f800000));
  Value* subnormal = bitsOf(b, b.CreateFMul(b.CreateSIToFP(magnitude, b.getFloatTy()),
                                            llvm::ConstantFP::get(b.getFloatTy(), 0x1p-24)));
  Value* bits =
      b.CreateSelect(b.CreateICmpEQ(exponent, i32(b, 0)), subnormal,
                     b.CreateSelect(b.CreateICmpEQ(exponent, i32(b, 0x7c00)), special, normal));
  return floatOf(b, b.CreateOr(bits, sign));
}

/// f32 to f16 bits (in the low half of an i32), rounding to nearest even.
/// Normal results round the 13 dropped mantissa bits as floatToBF16Bits
/// does, after rebiasing the exponent; magnitudes from 65520 (halfway to
/// the next power of two, which rounds up) overflow to infinity. Results
/// below 2^-14 are subnormal: adding 0.5 in f32 leaves the magnitude
/// rounded to a multiple of 2^-24 (the f32 spacing in [0.5, 1)) by the
/// FPU's own round-to-nearest-even, and the sum's low bits are the f16
/// subnormal mantissa (0x400, the smallest normal, when it rounds up).
Value* floatToF16Bits(llvm::IRBuilder<>& b, Value* f) {
  Value* bits = bitsOf(b, f);
  Value* sign = b.CreateAnd(b.CreateLShr(bits, 16), i32(b, 0x8000));
  Value* magnitude = b.CreateAnd(bits, i32(b, 0x7fffffff));
  Value* lsb = b.CreateAnd(b.CreateLShr(magnitude, 13), i32(b, 1));
  Value* normal = b.CreateLShr(b.CreateAdd(b.CreateSub(magnitude, i32(b, (127 - 15) << 23)),
                                           b.CreateAdd(lsb, i32(b, 0xfff))),
                               13);
  Value* half = llvm::ConstantFP::get(b.getFloatTy(), 0.5);
  Value* subnormal =
      b.CreateSub(bitsOf(b, b.CreateFAdd(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, f), half)),
                  i32(b, 0x3f000000));
  Value* nan = b.CreateOr(i32(b, 0x7e00), b.CreateAnd(b.CreateLShr(magnitude, 13), i32(b, 0x3ff)));
  Value* r = b.CreateSelect(b.CreateICmpULT(magnitude, i32(b, 0x38800000)), subnormal, normal);
  r = b.CreateSelect(b.CreateICmpUGE(magnitude, i32(b, 0x477ff000)), i32(b, 0x7c00), r);
  r = b.CreateSelect(b.CreateICmpUGT(magnitude, i32(b, 0x7f800000)), nan, r);
  return b.CreateOr(r, sign);
}

/// f32 \p f rounded to the nearest value of bf16 or f16, as a float.
Value* roundToReduced(llvm::IRBuilder<>& b, Value* f, DType dtype) {
  if (dtype == DType::BF16) {
    // The same rounding as floatToBF16Bits, kept in place: clear the low half.
    Value* bits = bitsOf(b, f);
    Value* lsb = b.CreateAnd(b.CreateLShr(bits, 16), i32(b, 1));
    Value* rounded =
        b.CreateAnd(b.CreateAdd(bits, b.CreateAdd(lsb, i32(b, 0x7fff))), i32(b, 0xffff0000));
    Value* nan = b.CreateAnd(b.CreateOr(bits, i32(b, 0x400000)), i32(b, 0xffff0000));
    return floatOf(b, b.CreateSelect(b.CreateFCmpUNO(f, f), nan, rounded));
  }
  return f16ToFloat(b, floatToF16Bits(b, f));
}

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
  case DType::BF16:
  case DType::F16:
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
  if (dtype == DType::Bool)
    return llvm::Type::getInt8Ty(ctx);
  if (isReducedFloat(dtype))
    return llvm::Type::getInt16Ty(ctx);
  return computeType(ctx, dtype);
}

Value* codegen::fromStorage(llvm::IRBuilder<>& b, Value* loaded, DType dtype) {
  switch (dtype) {
  case DType::Bool:
    return b.CreateICmpNE(loaded, b.getInt8(0));
  case DType::BF16:
    return bf16ToFloat(b, loaded);
  case DType::F16:
    return f16ToFloat(b, loaded);
  default:
    return loaded;
  }
}

Value* codegen::toStorage(llvm::IRBuilder<>& b, TypedValue v) {
  switch (v.dtype) {
  case DType::Bool:
    return b.CreateZExt(v.value, b.getInt8Ty());
  case DType::BF16:
    return b.CreateTrunc(floatToBF16Bits(b, v.value), b.getInt16Ty());
  case DType::F16:
    return b.CreateTrunc(floatToF16Bits(b, v.value), b.getInt16Ty());
  default:
    return v.value;
  }
}

Value* codegen::convert(llvm::IRBuilder<>& b, TypedValue v, DType to) {
  if (v.dtype == to)
    return v.value;
  // A bf16 or f16 value is exact in f32, so it converts as that f32 does;
  // anything converts to bf16 or f16 through f32, as c10's conversions do
  // (a double rounds to float first), then rounds once more.
  if (isReducedFloat(v.dtype))
    return convert(b, {v.value, DType::F32}, to);
  if (isReducedFloat(to))
    return roundToReduced(b, convert(b, v, DType::F32), to);
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
  llvm::SmallVector<std::optional<ValueRange>, 3> ranges;
  for (const std::optional<TypedValue>& operand : operands)
    ranges.push_back(operand ? std::optional<ValueRange>(operand->range) : std::nullopt);
  ValueRange range = resultRange(op, ranges, result);
  auto done = [&](Value* v) -> llvm::Expected<TypedValue> { return TypedValue{v, result, range}; };

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

  if (isReducedFloat(result)) {
    // Computed in f32 and rounded, as ATen's bf16/f16 kernels compute in
    // their float opmath type. Operands are first converted to the result
    // dtype, as TensorIterator casts inputs to the common dtype (numbers
    // included: add's `other` and alpha are rounded), except that mul and
    // div read a number at f32 precision (ATen's original_scalar_value).
    bool keepsNumbers = op == ElementOp::Mul || op == ElementOp::Div || op == ElementOp::DivTrunc;
    llvm::SmallVector<std::optional<TypedValue>, 3> wide;
    for (const std::optional<TypedValue>& operand : operands) {
      if (!operand) {
        wide.push_back(std::nullopt);
        continue;
      }
      DType via = keepsNumbers && !isReducedFloat(operand->dtype) ? DType::F32 : result;
      wide.push_back(TypedValue{convert(b, *operand, via), DType::F32, operand->range});
    }
    llvm::Expected<TypedValue> computed = lowerElement(b, op, wide, DType::F32);
    if (!computed)
      return computed.takeError();
    return done(roundToReduced(b, computed->value, result));
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
    return done(emitExp(b, x, ranges[0].value_or(ValueRange::all())));
  case ElementOp::Log:
    return done(emitLog(b, x));
  case ElementOp::Tanh:
    return done(emitTanh(b, x, ranges[0].value_or(ValueRange::all())));
  case ElementOp::Sigmoid:
    return done(emitSigmoid(b, x, ranges[0].value_or(ValueRange::all())));
  case ElementOp::Erf:
    return done(emitErf(b, x));
  case ElementOp::Gelu:
    return done(emitGelu(b, x));
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
