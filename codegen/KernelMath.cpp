//===- KernelMath.cpp - Transcendental functions as inline IR -------------===//
//
// Everything here is selects and arithmetic on one double, so that a loop
// calling these stays a single basic block the vectorizer can widen.
// Special values (NaN, +-inf, 0, subnormals) are handled with selects after
// the main computation rather than with branches.
//
//===----------------------------------------------------------------------===//
#include "codegen/KernelMath.h"

#include "llvm/IR/Intrinsics.h"

#include <cmath>
#include <limits>

using namespace dync;
using namespace dync::codegen;
using llvm::Value;

namespace {

// ln 2 split so that k * kLn2Hi is exact for the |k| <= 1100 exp and log
// use: kLn2Hi has 32 significant bits.
constexpr double kLn2Hi = 6.93147180369123816490e-01;
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr double kLog2E = 1.44269504088896338700e+00;

Value* constant(llvm::IRBuilder<>& b, double v) {
  return llvm::ConstantFP::get(b.getDoubleTy(), v);
}

/// c[0] + x (c[1] + x (c[2] + ...)).
Value* horner(llvm::IRBuilder<>& b, Value* x, llvm::ArrayRef<double> coefficients) {
  Value* acc = constant(b, coefficients.back());
  for (double c : llvm::reverse(coefficients.drop_back()))
    acc = b.CreateFAdd(b.CreateFMul(acc, x), constant(b, c));
  return acc;
}

Value* isNaN(llvm::IRBuilder<>& b, Value* x) { return b.CreateFCmpUNO(x, x); }

/// 2^k for an i64 k in [-1022, 1023], built from its exponent bits.
Value* powerOfTwo(llvm::IRBuilder<>& b, Value* k) {
  Value* bits = b.CreateShl(b.CreateAdd(k, b.getInt64(1023)), 52);
  return b.CreateBitCast(bits, b.getDoubleTy());
}

} // namespace

Value* codegen::emitExp(llvm::IRBuilder<>& b, Value* x) {
  // Beyond these bounds the result is inf or 0 anyway; clamping keeps the
  // scale factors below in range. Comparisons with NaN are false, so NaN
  // passes through to the final select.
  Value* xc = b.CreateSelect(b.CreateFCmpOLT(x, constant(b, -746.0)), constant(b, -746.0), x);
  xc = b.CreateSelect(b.CreateFCmpOGT(xc, constant(b, 710.0)), constant(b, 710.0), xc);
  // x = k ln2 + r, |r| <= ln2 / 2.
  Value* k =
      b.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, b.CreateFMul(xc, constant(b, kLog2E)));
  Value* r = b.CreateFSub(b.CreateFSub(xc, b.CreateFMul(k, constant(b, kLn2Hi))),
                          b.CreateFMul(k, constant(b, kLn2Lo)));
  // e^r by its Taylor series; the first omitted term is below 1e-17.
  llvm::SmallVector<double, 16> taylor;
  double term = 1.0;
  for (int n = 0; n <= 13; ++n) {
    taylor.push_back(term);
    term /= n + 1;
  }
  Value* p = horner(b, r, taylor);
  // 2^k in two factors so subnormal results and k = 1024 stay exact.
  Value* ki = b.CreateFPToSI(k, b.getInt64Ty());
  Value* half = b.CreateAShr(ki, 1);
  Value* rest = b.CreateSub(ki, half);
  Value* result = b.CreateFMul(b.CreateFMul(p, powerOfTwo(b, half)), powerOfTwo(b, rest));
  return b.CreateSelect(isNaN(b, x), x, result);
}

Value* codegen::emitLog(llvm::IRBuilder<>& b, Value* x) {
  // Subnormals are scaled into the normal range first.
  Value* subnormal = b.CreateFCmpOLT(x, constant(b, std::numeric_limits<double>::min()));
  Value* xs = b.CreateSelect(subnormal, b.CreateFMul(x, constant(b, 0x1p54)), x);
  Value* bits = b.CreateBitCast(xs, b.getInt64Ty());
  Value* e = b.CreateSub(b.CreateAnd(b.CreateLShr(bits, 52), b.getInt64(0x7ff)), b.getInt64(1023));
  e = b.CreateSub(e, b.CreateSelect(subnormal, b.getInt64(54), b.getInt64(0)));
  // x = 2^e m with m in [sqrt(1/2), sqrt(2)).
  Value* mBits = b.CreateOr(b.CreateAnd(bits, b.getInt64(0x000FFFFFFFFFFFFFLL)),
                            b.getInt64(0x3FF0000000000000LL));
  Value* m = b.CreateBitCast(mBits, b.getDoubleTy());
  Value* large = b.CreateFCmpOGT(m, constant(b, M_SQRT2));
  m = b.CreateSelect(large, b.CreateFMul(m, constant(b, 0.5)), m);
  e = b.CreateSelect(large, b.CreateAdd(e, b.getInt64(1)), e);
  // log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.172: the series
  // 2 (s + s^3/3 + s^5/5 + ...) to s^25 leaves less than 1e-17.
  Value* one = constant(b, 1.0);
  Value* s = b.CreateFDiv(b.CreateFSub(m, one), b.CreateFAdd(m, one));
  Value* z = b.CreateFMul(s, s);
  llvm::SmallVector<double, 16> series;
  for (int k = 0; k <= 12; ++k)
    series.push_back(1.0 / (2 * k + 1));
  Value* logM = b.CreateFMul(b.CreateFMul(constant(b, 2.0), s), horner(b, z, series));
  Value* ef = b.CreateSIToFP(e, b.getDoubleTy());
  Value* result = b.CreateFAdd(b.CreateFMul(ef, constant(b, kLn2Hi)),
                               b.CreateFAdd(b.CreateFMul(ef, constant(b, kLn2Lo)), logM));
  double inf = std::numeric_limits<double>::infinity();
  result = b.CreateSelect(b.CreateFCmpOEQ(x, constant(b, inf)), x, result);
  result = b.CreateSelect(b.CreateFCmpOEQ(x, constant(b, 0.0)), constant(b, -inf), result);
  Value* invalid = b.CreateOr(b.CreateFCmpOLT(x, constant(b, 0.0)), isNaN(b, x));
  return b.CreateSelect(invalid, constant(b, std::numeric_limits<double>::quiet_NaN()), result);
}

Value* codegen::emitTanh(llvm::IRBuilder<>& b, Value* x) {
  Value* a = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  // Large |x|: 1 - 2 / (e^2|x| + 1), exact to a few ulp once tanh >= 0.06.
  Value* e = emitExp(b, b.CreateFMul(a, constant(b, 2.0)));
  Value* large = b.CreateFSub(constant(b, 1.0),
                              b.CreateFDiv(constant(b, 2.0), b.CreateFAdd(e, constant(b, 1.0))));
  // Small |x|: the Taylor series, where the formula above would cancel.
  Value* z = b.CreateFMul(a, a);
  Value* series =
      horner(b, z, {1.0, -1.0 / 3, 2.0 / 15, -17.0 / 315, 62.0 / 2835, -1382.0 / 155925});
  Value* small = b.CreateFMul(a, series);
  Value* t = b.CreateSelect(b.CreateFCmpOLT(a, constant(b, 0.0625)), small, large);
  return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, t, x);
}

Value* codegen::emitErf(llvm::IRBuilder<>& b, Value* x) {
  Value* a = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  Value* saturated = b.CreateFCmpOGE(a, constant(b, 4.0));
  Value* ac = b.CreateSelect(saturated, constant(b, 4.0), a);
  // erf(a) = 2/sqrt(pi) e^-a^2 sum_n 2^n a^(2n+1) / (1 3 5 ... (2n+1)):
  // every term is positive, so nothing cancels; up to a = 4 the terms
  // after n = 62 add less than 1e-17 relatively.
  Value* y = b.CreateFMul(ac, ac);
  llvm::SmallVector<double, 64> coefficients;
  double c = 1.0;
  for (int n = 0; n <= 62; ++n) {
    coefficients.push_back(c);
    c *= 2.0 / (2 * n + 3);
  }
  Value* sum = b.CreateFMul(ac, horner(b, y, coefficients));
  Value* scale = b.CreateFMul(emitExp(b, b.CreateFNeg(y)), constant(b, M_2_SQRTPI));
  Value* r = b.CreateSelect(saturated, constant(b, 1.0), b.CreateFMul(sum, scale));
  return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, r, x);
}
