//===- KernelMath.cpp - Transcendental functions as inline IR -------------===//
//
// Everything here is selects and arithmetic on one float or double, so that
// a loop calling these stays a single basic block the vectorizer can widen.
// Special values (NaN, +-inf, 0, subnormals) are handled with selects after
// the main computation rather than with branches.
//
// One implementation serves both types: a FloatFormat holds what differs
// (bit layout, overflow bounds, how many polynomial terms the precision
// needs), and every constant is made in the argument's type.
//
//===----------------------------------------------------------------------===//
#include "codegen/KernelMath.h"

#include "codegen/VectorIsa.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/IR/Intrinsics.h"

#include <array>
#include <cassert>
#include <cmath>
#include <limits>

using namespace dync;
using namespace dync::codegen;
using llvm::Value;

namespace {

/// ln 2 to more digits than a double holds, so the low half of the split
/// below is right to the last bit of a double.
constexpr long double kLn2 = 0.693147180559945309417232121458176568L;

/// \p v truncated to its leading \p bits significant bits.
double leadingBits(double v, int bits) {
  int exponent = 0;
  double mantissa = std::frexp(v, &exponent);
  return std::ldexp(std::trunc(std::ldexp(mantissa, bits)), exponent - bits);
}

/// What the functions need to know about a floating-point type.
struct FloatFormat {
  llvm::Type* type;     // float or double
  llvm::Type* bitsType; // the integer of the same width
  int mantissaBits;
  int exponentBias;
  // exp: below expLow the result is 0 and above expHigh inf, for every
  // input; clamping there keeps the scale factors 2^(k/2) normal.
  double expLow, expHigh;
  // exp of x in [normalExpLow, normalExpHigh] has a k whose 2^k is normal
  // (and p 2^k normal or inf), so it scales by 2^k in one multiply.
  double normalExpLow, normalExpHigh;
  // ln 2 = ln2Hi + ln2Lo, with ln2Hi short enough that k * ln2Hi is exact
  // for every exponent k the type has.
  double ln2Hi, ln2Lo;
  // log: subnormals are scaled by 2^subnormalShift into the normal range.
  int subnormalShift;
  int logTerms;
  // sigmoid: 2^(k + sigmoidShift) is normal for every k of exp's clamped
  // non-positive arguments (k >= round(expLow / ln2)).
  int sigmoidShift;
  // tanh: from tanhSaturated on, 1 - tanh(x) is below a quarter ulp of 1,
  // so tanh rounds to 1.
  double tanhSaturated;

  // f32 exp from a table of 2^(j/16) and scalef (expFromTable), on targets
  // with the instructions for both.
  bool tableExp;

  static FloatFormat of(llvm::IRBuilder<>& b, llvm::Type* type) {
    llvm::LLVMContext& ctx = type->getContext();
    FloatFormat f;
    f.type = type;
    f.tableExp =
        type->isFloatTy() && vectorIsaOf(*b.GetInsertBlock()->getModule()) == VectorIsa::Avx512;
    if (type->isFloatTy()) {
      f.bitsType = llvm::Type::getInt32Ty(ctx);
      f.mantissaBits = 23;
      f.exponentBias = 127;
      f.expLow = -104.0;
      f.expHigh = 89.0;
      // k = round(x / ln2) is -124 at -86 and 127 at 88.
      f.normalExpLow = -86.0;
      f.normalExpHigh = 88.0;
      f.ln2Hi = leadingBits(double(kLn2), 9);
      f.subnormalShift = 25;
      // k >= -150, and 2^-126 is the least normal power of two.
      f.sigmoidShift = 24;
      // |s| <= 0.172: the first omitted term, s^13/13 against s, is 5e-11.
      f.logTerms = 6;
      // 2 e^-2x < 2^-25 from x = 9.01.
      f.tanhSaturated = 10.0;
    } else {
      assert(type->isDoubleTy() && "kernel math computes in float or double");
      f.bitsType = llvm::Type::getInt64Ty(ctx);
      f.mantissaBits = 52;
      f.exponentBias = 1023;
      f.expLow = -746.0;
      f.expHigh = 710.0;
      // k is -1021 at -707 and 1023 at 709.
      f.normalExpLow = -707.0;
      f.normalExpHigh = 709.0;
      f.ln2Hi = leadingBits(double(kLn2), 32);
      f.subnormalShift = 54;
      // k >= -1076, and 2^-1022 is the least normal power of two.
      f.sigmoidShift = 54;
      // The series to s^25 leaves less than 1e-17.
      f.logTerms = 13;
      // 2 e^-2x < 2^-54 from x = 19.06.
      f.tanhSaturated = 20.0;
    }
    f.ln2Lo = double(kLn2 - (long double)f.ln2Hi);
    return f;
  }

  Value* constant(double v) const { return llvm::ConstantFP::get(type, v); }
  Value* integer(int64_t v) const { return llvm::ConstantInt::get(bitsType, v, true); }
};

/// c[0] + x (c[1] + x (c[2] + ...)), each step one multiply-add the
/// backend may fuse.
Value* horner(llvm::IRBuilder<>& b, const FloatFormat& f, Value* x,
              llvm::ArrayRef<double> coefficients) {
  Value* acc = f.constant(coefficients.back());
  for (double c : llvm::reverse(coefficients.drop_back()))
    acc = b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {f.type}, {acc, x, f.constant(c)});
  return acc;
}

Value* isNaN(llvm::IRBuilder<>& b, Value* x) { return b.CreateFCmpUNO(x, x); }

/// n / d where the caller knows both are finite (or NaN) and |d| is at
/// least 1 and small enough that its reciprocal is normal. Without the
/// table of exp, f32 divisions are marked as allowing a reciprocal and no
/// infinities, so the backend may use a reciprocal estimate with a Newton
/// step and a residual correction (rcp14 and two FMAs): within an ulp of
/// the quotient, and off the divider, which a chain of sigmoids and tanhs
/// otherwise queues on. With the table, the multiply-add units have the
/// less spare time of the two and the divider computes the quotient
/// (docs/kernels.md has both measurements). f64 keeps a true division: the
/// estimate would need more steps than the divider costs.
Value* boundedDivide(llvm::IRBuilder<>& b, const FloatFormat& f, Value* n, Value* d) {
  Value* q = b.CreateFDiv(n, d);
  if (f.type->isFloatTy() && !f.tableExp) {
    llvm::FastMathFlags flags;
    flags.setAllowReciprocal();
    flags.setNoInfs();
    flags.setAllowContract();
    llvm::cast<llvm::Instruction>(q)->setFastMathFlags(flags);
  }
  return q;
}

/// 2^k for an integer k in the type's normal exponent range, built from its
/// exponent bits.
Value* powerOfTwo(llvm::IRBuilder<>& b, const FloatFormat& f, Value* k) {
  Value* bits = b.CreateShl(b.CreateAdd(k, f.integer(f.exponentBias)), f.mantissaBits);
  return b.CreateBitCast(bits, f.type);
}

/// x = k step + r with k = round(x / step).
///
/// k comes from adding a shifter, 1.5 2^mantissaBits plus a whole
/// \p offset, to x / step in one multiply-add: the sum's last bit is worth
/// 1, so the addition itself rounds to the nearest whole number, and the
/// sum's low bits hold k + offset as an integer. Subtracting the shifter
/// gives k as a float, exactly; shifting the bits left moves k + offset
/// into an exponent field while everything above it (the shifter's own
/// bits) falls off the top. That replaces a round, a conversion to integer
/// and an add. |x / step| + |offset| must stay below 2^(mantissaBits - 1).
struct Reduced {
  Value* k; // a whole number, as a float
  Value* r;
  Value* bits; // an integer whose low bits are k + offset
};

/// The reduction of \p x by \p step as above. \p weight bounds what a step
/// rounded to the type does to the result, in units of its rounding error:
/// the largest |k| for exp, less where the function damps it (tanh). Where
/// that is within a quarter ulp, k multiplies the rounded step in one
/// multiply-add; elsewhere the step is split in two, \p stepHi short
/// enough that every k stepHi is exact, and r is exact to the rest's
/// rounding.
Reduced reduceBy(llvm::IRBuilder<>& b, const FloatFormat& f, Value* x, long double step,
                 double stepHi, double weight, int64_t offset = 0) {
  double shifter = std::ldexp(1.5, f.mantissaBits) + double(offset);
  Value* shifted = b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {f.type},
                                     {x, f.constant(double(1 / step)), f.constant(shifter)});
  // r = x - k step, computed as x + k' step' with k' step' = -k step and
  // k' step' = -0 at k = 0 (k' = k and step' = -step for a positive step,
  // k' = -k and step' = step for a negative one): r then keeps the sign of
  // a zero x, as tanh's result must.
  Value* k = b.CreateFSub(shifted, f.constant(shifter));
  Value* kSigned = step > 0 ? k : b.CreateFSub(f.constant(shifter), shifted);
  auto times = [&](double v) { return f.constant(step > 0 ? -v : v); };
  long double rounded = f.type->isFloatTy() ? (long double)float(step) : (long double)double(step);
  Value* r;
  if (weight * std::fabs(step - rounded) <= std::ldexp(1.0, -(f.mantissaBits + 2))) {
    r = b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {f.type}, {kSigned, times(double(rounded)), x});
  } else {
    r = b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {f.type}, {kSigned, times(stepHi), x});
    r = b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {f.type},
                          {kSigned, times(double(step - stepHi)), r});
  }
  return {k, r, b.CreateBitCast(shifted, f.bitsType)};
}

/// x = k ln2 + r, |r| <= ln2 / 2, for |x| <= \p magnitude within the
/// clamps of exp (k ln2Hi is exact for every exponent k the type has).
Reduced reduceByLn2(llvm::IRBuilder<>& b, const FloatFormat& f, Value* x, double magnitude,
                    int64_t offset = 0) {
  return reduceBy(b, f, x, kLn2, f.ln2Hi, magnitude / double(kLn2) + 0.5, offset);
}

/// The largest magnitude of x in \p range clamped to [lo, hi].
double magnitudeWithin(ValueRange range, double lo, double hi) {
  return std::max(std::fabs(std::max(range.lo, lo)), std::fabs(std::min(range.hi, hi)));
}

/// 2^(k + offset - exponentBias) from a reduction whose offset includes the
/// exponent bias: k's bits shifted into the exponent field. A NaN x leaves
/// some power of two here; the NaN carried by r makes the result NaN.
Value* powerOfTwo(llvm::IRBuilder<>& b, const FloatFormat& f, const Reduced& red) {
  return b.CreateBitCast(b.CreateShl(red.bits, f.mantissaBits), f.type);
}

/// k + offset of a reduction, as an integer of the type's width.
Value* wholeOf(llvm::IRBuilder<>& b, const FloatFormat& f, const Reduced& red) {
  int64_t shifterBits = (int64_t(f.exponentBias + f.mantissaBits) << f.mantissaBits) |
                        (int64_t(1) << (f.mantissaBits - 1));
  return b.CreateSub(red.bits, f.integer(shifterBits));
}

/// Taylor coefficients 1/n! for n from \p first, \p count of them.
llvm::SmallVector<double, 16> inverseFactorials(int first, int count) {
  llvm::SmallVector<double, 16> c;
  double factorial = 1.0;
  for (int n = 1; n <= first; ++n)
    factorial *= n;
  for (int n = first; n < first + count; ++n) {
    c.push_back(1.0 / factorial);
    factorial *= n + 1;
  }
  return c;
}

/// Coefficient i of \p coefficients times first ratio^i: the polynomial in
/// x turned into one in ratio x and scaled by first. With first and ratio
/// powers of two or their negatives, every product is exact.
llvm::SmallVector<double, 16> timesPowers(llvm::ArrayRef<double> coefficients, double first,
                                          double ratio) {
  llvm::SmallVector<double, 16> scaled;
  double factor = first;
  for (double c : coefficients) {
    scaled.push_back(c * factor);
    factor *= ratio;
  }
  return scaled;
}

/// The polynomials of e^r and of q(r) = (e^r - 1 - r) / r^2 on
/// |r| <= ln2/2 (expm1 is r + r^2 q(r) there). f32 uses Chebyshev
/// interpolants, near the best polynomials of their degree: a term fewer
/// than the Taylor series for the same error. f64 keeps the Taylor series,
/// whose coefficients 1/n! round to double with no loss the interpolant's
/// would not also have.
llvm::ArrayRef<double> expPolynomial(const FloatFormat& f);
llvm::ArrayRef<double> expm1Polynomial(const FloatFormat& f);
llvm::ArrayRef<double> tableExpPolynomial();

constexpr int TableBits = 4;
constexpr int TableSize = 1 << TableBits;

/// 2^(j/16 + shift) for j = 0..15, rounded to float. \p adjusted entries
/// have j << 19 subtracted from their bits: adding k << 19 for k = 16 n + j
/// then gives the bits of 2^n times the entry, the j in k cancelling.
std::array<float, TableSize> sixteenthPowers(int shift, bool adjusted) {
  std::array<float, TableSize> p;
  for (int j = 0; j < TableSize; ++j) {
    float power = float(std::exp2((long double)j / TableSize + shift));
    uint32_t bits = llvm::bit_cast<uint32_t>(power);
    if (adjusted)
      bits -= uint32_t(j) << (23 - TableBits);
    p[j] = llvm::bit_cast<float>(bits);
  }
  return p;
}

/// e^(+-x) 2^shift (+ \p addend, where every result is normal) for a
/// float x (or NaN) with |x| <= \p magnitude <= 104, from
/// x = +-(16 n + j) ln2/16 + r, |r| <= ln2/32: e^(+-x) = 2^n 2^(j/16)
/// e^(+-r), with 2^(j/16) from a table in one register and
/// e^s - 1 = s + s^2 q(s), q of degree 1: three multiply-adds fewer than
/// the polynomial on |r| <= ln2/2. For e^-x the reduction steps by
/// -ln2/16 and the signs go into q's coefficients and the last
/// multiply-add, so -x is never formed.
///
/// Where every result is \p normal, 2^n goes into the table entry's
/// exponent bits before the last multiply-add; elsewhere scalef multiplies
/// by 2^(n + shift) with one rounding, subnormal results included, and no
/// scaling in two steps. A NaN x gives NaN: it is in e^r - 1. Within about
/// an ulp: the table entry's rounding (half an ulp of 2^(j/16)) and the
/// last multiply-add's. A second table with what the entries' rounding left
/// out would halve that, but its lookup made the benchmark's pointwise
/// chain 10% slower (docs/kernels.md).
Value* expFromTable(llvm::IRBuilder<>& b, const FloatFormat& f, Value* x, double magnitude,
                    bool negate, int shift, bool normal, double addend = 0.0) {
  // |16 x / ln2| <= 2401: 12 bits, so each k stepHi is exact.
  const long double step = kLn2 / TableSize;
  const double sign = negate ? -1.0 : 1.0;
  Reduced red = reduceBy(b, f, x, sign * step, sign * leadingBits(double(step), 24 - 12),
                         magnitude / double(step) + 0.5);
  // e^s - 1 for s = sign r: s + s^2 q(s), q's coefficient i times sign^i.
  llvm::SmallVector<double, 16> q = timesPowers(tableExpPolynomial(), 1.0, sign);
  Value* s = negate ? b.CreateFNeg(red.r) : red.r;
  Value* em1 = b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {f.type},
                                 {b.CreateFMul(red.r, red.r), horner(b, f, red.r, q), s});
  // k's low four bits pick the entry (the table is f32's, and bits an i32).
  if (normal) {
    Value* entry = emitTableLookup(b, sixteenthPowers(shift, /*adjusted=*/true), red.bits);
    Value* bits = b.CreateAdd(b.CreateBitCast(entry, f.bitsType),
                              b.CreateShl(red.bits, f.mantissaBits - TableBits));
    Value* scaled = b.CreateBitCast(bits, f.type);
    // An addend joins the entry before the last multiply-add, off the
    // chain of dependences through the polynomial.
    Value* sum = addend == 0.0 ? scaled : b.CreateFAdd(scaled, f.constant(addend));
    return b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {f.type}, {scaled, em1, sum});
  }
  assert(addend == 0.0 && "an addend joins only exponent-bit scaling");
  Value* entry = emitTableLookup(b, sixteenthPowers(0, /*adjusted=*/false), red.bits);
  Value* mantissa = b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {f.type}, {entry, em1, entry});
  // scalef multiplies by 2^floor(k/16 + shift) = 2^(n + shift); k/16 + shift
  // is exact.
  Value* n = b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {f.type},
                               {red.k, f.constant(1.0 / TableSize), f.constant(shift)});
  return emitScalef(b, mantissa, n);
}

/// e^(-2a) - 1 for |a| <= tanhSaturated, as tanh needs it: there 2^k is
/// normal and e^x - 1 = 2^k expm1(r) + (2^k - 1) (x = -2a), where the sum
/// cancels at most a bit (|x| >= ln2/2 whenever k != 0) and 2^k - 1 is
/// exact, or, from k = 25 (53 in f64), rounds to 2^k by less than tanh
/// can show. x itself is never formed: r = -2h with h = a + k ln2/2
/// reduced the same way, the polynomial in r is one in h with each
/// coefficient times a power of -2, and so on. Every such scaling is
/// exact, so the result is bit for bit what the steps in x give, without
/// the multiply by -2. A zero a gives a zero of the opposite sign.
Value* emitExpm1OfMinusTwice(llvm::IRBuilder<>& b, const FloatFormat& f, Value* a) {
  // k = round(-2a / ln2) (-2a log2e rounds as a (-2 log2e) does), and
  // h = a + k ln2/2: a reduced by a step of -ln2/2.
  // A step rounded to the type moves h by |k| times its rounding error e,
  // and tanh by at most 4 |k| e e^-2a / (1 + e^-2a)^2 (tanh = -m / (2 + m)
  // with m = e^-2a - 1): relatively, below 6 e, the most at |a| = ln2/4,
  // the least |a| with k != 0.
  Reduced red = reduceBy(b, f, a, -kLn2 / 2, -f.ln2Hi / 2, 6.0, f.exponentBias);
  Value* h = red.r;
  // expm1(r) = r + r^2 q(r) = -2 (h + h^2 q'(h)) with q'(h) = -2 q(-2h):
  // coefficient j of q' is q's times (-2)^(j+1).
  Value* q = horner(b, f, h, timesPowers(expm1Polynomial(f), -2.0, -2.0));
  Value* halfEm = b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {f.type}, {b.CreateFMul(h, h), q, h});
  Value* scale = powerOfTwo(b, f, red);
  // 2^k expm1(r) + (2^k - 1) = -(2^(k+1)) halfEm - (1 - 2^k). For a zero a,
  // h and halfEm are that zero, and -(1 - 2^k) is -0, which the product
  // added to it keeps: the result is the zero of a's opposite sign.
  Value* twiceScale = b.CreateFAdd(scale, scale);
  return b.CreateIntrinsic(
      llvm::Intrinsic::fmuladd, {f.type},
      {b.CreateFNeg(twiceScale), halfEm, b.CreateFNeg(b.CreateFSub(f.constant(1.0), scale))});
}

} // namespace

namespace {

/// x clamped to [lo, hi], leaving out the clamps no x in \p range reaches.
/// Comparisons with NaN are false, so NaN passes through.
Value* clampTo(llvm::IRBuilder<>& b, const FloatFormat& f, Value* x, ValueRange range, double lo,
               double hi) {
  if (range.lo < lo)
    x = b.CreateSelect(b.CreateFCmpOLT(x, f.constant(lo)), f.constant(lo), x);
  if (range.hi > hi)
    x = b.CreateSelect(b.CreateFCmpOGT(x, f.constant(hi)), f.constant(hi), x);
  return x;
}

/// e^x 2^shift, for a \p shift that keeps every result of x in \p range
/// normal when 2^(k + shift) is. x is clamped to [expLow, expHigh]; the
/// clamps no x in \p range reaches are left out, and so is the scaling in
/// two steps when one multiply by 2^(k + shift) is exact.
Value* emitExpTimesPowerOfTwo(llvm::IRBuilder<>& b, const FloatFormat& f, Value* x,
                              ValueRange range, int shift) {
  Value* xc = clampTo(b, f, x, range, f.expLow, f.expHigh);
  double magnitude = magnitudeWithin(range, f.expLow, f.expHigh);
  bool normal = range.within(f.normalExpLow, f.normalExpHigh);
  if (f.tableExp)
    return expFromTable(b, f, xc, magnitude, /*negate=*/false, shift, normal);
  // A NaN x stays NaN through the clamps and r, whatever 2^k comes out as.
  if (shift != 0 || normal) {
    Reduced red = reduceByLn2(b, f, xc, magnitude, f.exponentBias + shift);
    return b.CreateFMul(horner(b, f, red.r, expPolynomial(f)), powerOfTwo(b, f, red));
  }
  // 2^k in two factors so subnormal results and the largest k stay exact.
  Reduced red = reduceByLn2(b, f, xc, magnitude);
  Value* p = horner(b, f, red.r, expPolynomial(f));
  Value* k = wholeOf(b, f, red);
  Value* half = b.CreateAShr(k, 1);
  Value* rest = b.CreateSub(k, half);
  return b.CreateFMul(b.CreateFMul(p, powerOfTwo(b, f, half)), powerOfTwo(b, f, rest));
}

} // namespace

Value* codegen::emitExp(llvm::IRBuilder<>& b, Value* x, ValueRange range) {
  return emitExpTimesPowerOfTwo(b, FloatFormat::of(b, x->getType()), x, range, 0);
}

Value* codegen::emitLog(llvm::IRBuilder<>& b, Value* x) {
  FloatFormat f = FloatFormat::of(b, x->getType());
  double minNormal = f.type->isFloatTy() ? double(std::numeric_limits<float>::min())
                                         : std::numeric_limits<double>::min();
  Value* subnormal = b.CreateFCmpOLT(x, f.constant(minNormal));
  Value* xs =
      b.CreateSelect(subnormal, b.CreateFMul(x, f.constant(std::ldexp(1.0, f.subnormalShift))), x);
  Value* bits = b.CreateBitCast(xs, f.bitsType);
  int64_t exponentMask =
      (int64_t(1) << (f.bitsType->getIntegerBitWidth() - 1 - f.mantissaBits)) - 1;
  Value* e = b.CreateSub(b.CreateAnd(b.CreateLShr(bits, f.mantissaBits), f.integer(exponentMask)),
                         f.integer(f.exponentBias));
  e = b.CreateSub(e, b.CreateSelect(subnormal, f.integer(f.subnormalShift), f.integer(0)));
  // x = 2^e m with m in [sqrt(1/2), sqrt(2)).
  int64_t mantissaMask = (int64_t(1) << f.mantissaBits) - 1;
  int64_t oneBits = int64_t(f.exponentBias) << f.mantissaBits;
  Value* mBits = b.CreateOr(b.CreateAnd(bits, f.integer(mantissaMask)), f.integer(oneBits));
  Value* m = b.CreateBitCast(mBits, f.type);
  Value* large = b.CreateFCmpOGT(m, f.constant(M_SQRT2));
  m = b.CreateSelect(large, b.CreateFMul(m, f.constant(0.5)), m);
  e = b.CreateSelect(large, b.CreateAdd(e, f.integer(1)), e);
  // log m = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...), s = (m - 1) / (m + 1),
  // |s| <= 0.172.
  Value* one = f.constant(1.0);
  Value* s = boundedDivide(b, f, b.CreateFSub(m, one), b.CreateFAdd(m, one));
  Value* z = b.CreateFMul(s, s);
  llvm::SmallVector<double, 16> series;
  for (int k = 0; k < f.logTerms; ++k)
    series.push_back(1.0 / (2 * k + 1));
  Value* logM = b.CreateFMul(b.CreateFMul(f.constant(2.0), s), horner(b, f, z, series));
  Value* ef = b.CreateSIToFP(e, f.type);
  Value* result = b.CreateFAdd(b.CreateFMul(ef, f.constant(f.ln2Hi)),
                               b.CreateFAdd(b.CreateFMul(ef, f.constant(f.ln2Lo)), logM));
  double inf = std::numeric_limits<double>::infinity();
  result = b.CreateSelect(b.CreateFCmpOEQ(x, f.constant(inf)), x, result);
  result = b.CreateSelect(b.CreateFCmpOEQ(x, f.constant(0.0)), f.constant(-inf), result);
  Value* invalid = b.CreateOr(b.CreateFCmpOLT(x, f.constant(0.0)), isNaN(b, x));
  return b.CreateSelect(invalid, f.constant(std::numeric_limits<double>::quiet_NaN()), result);
}

Value* codegen::emitTanh(llvm::IRBuilder<>& b, Value* x, ValueRange range) {
  FloatFormat f = FloatFormat::of(b, x->getType());
  // tanh x = -m / (2 + m) with m = e^(-2x) - 1: no cancellation anywhere,
  // so one formula serves small and large |x| alike, and either sign: m
  // is in [-1, 0] for x >= 0 and [0, e^20] below (e^40 in f64), where -m
  // makes the quotient's sign. Neither |x| nor a copysign is needed; a
  // zero x gives m = -x and keeps its sign.
  Value* xc = clampTo(b, f, x, range, -f.tanhSaturated, f.tanhSaturated);
  // (The table of exp needs each entry's rounding error as well here, where
  // e^x - 1 cancels: with a second table of them, 1-2% faster on the
  // benchmark's chain but 3 ulp instead of 2, docs/benchmarks.md.)
  Value* m = emitExpm1OfMinusTwice(b, f, xc);
  return boundedDivide(b, f, m, b.CreateFSub(f.constant(-2.0), m));
}

Value* codegen::emitSigmoid(llvm::IRBuilder<>& b, Value* x, ValueRange range) {
  FloatFormat f = FloatFormat::of(b, x->getType());
  if (f.tableExp) {
    // 1 / (1 + e^-x) as 2^-24 / (2^-24 + e^-x 2^-24), x clamped to
    // [-104, 18]: there e^-x 2^-24 lies between 2^-50 and 2^126, so 2^n goes
    // into the table entry's exponent bits (no scalef), and the quotient,
    // subnormal or not, rounds once. Beyond the clamps nothing changes:
    // from x = 17.4 on, e^-x is below 2^-25 and the quotient rounds to 1;
    // from -103.98 down, e^x is below 2^-150 and it rounds to 0. No |x|
    // and no select between two numerators, as below.
    constexpr int shift = -24;
    constexpr double lowest = -104.0, highest = 18.0;
    double scale = std::ldexp(1.0, shift);
    Value* divisor = expFromTable(b, f, clampTo(b, f, x, range, lowest, highest),
                                  magnitudeWithin(range, lowest, highest), /*negate=*/true, shift,
                                  /*normal=*/true, scale);
    return boundedDivide(b, f, f.constant(scale), divisor);
  }
  // With e = e^-|x| in [0, 1]: 1 / (1 + e) from 0 on, e / (1 + e) below.
  // The divisor stays in [1, 2] and nothing overflows, whatever x is.
  // Where e may be subnormal, numerator and divisor are both scaled by
  // 2^sigmoidShift: e 2^shift is then normal down to the clamp of exp, so
  // one multiply makes it, and the quotient, unchanged by the scaling, is
  // rounded once, subnormal or not.
  double magnitude = range.maxMagnitude();
  int shift = -magnitude < f.normalExpLow ? f.sigmoidShift : 0;
  Value* scale = f.constant(std::ldexp(1.0, shift));
  Value* e =
      emitExpTimesPowerOfTwo(b, f, b.CreateFNeg(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x)),
                             ValueRange{-magnitude, 0.0}, shift);
  // NaN fails the comparison and flows through e.
  Value* numerator = b.CreateSelect(b.CreateFCmpOLT(x, f.constant(0.0)), e, scale);
  return boundedDivide(b, f, numerator, b.CreateFAdd(scale, e));
}

namespace {

/// The Chebyshev interpolant of \p function on [lo, hi] of the given
/// degree, as monomial coefficients in the function's own variable: close
/// to the best polynomial of its degree for a smooth function. Computed in
/// long double, so the coefficients are right to the last bit of a double
/// whenever the interval keeps them moderate.
llvm::SmallVector<double, 16>
chebyshevInterpolant(llvm::function_ref<long double(long double)> function, long double lo,
                     long double hi, int degree) {
  const long double pi = 3.141592653589793238462643383279502884L;
  int n = degree + 1;
  llvm::SmallVector<long double, 16> values;
  for (int k = 0; k < n; ++k) {
    long double s = std::cos(pi * (k + 0.5L) / n);
    values.push_back(function(((hi - lo) * s + hi + lo) / 2));
  }
  // Chebyshev coefficients, then the monomial coefficients in s of
  // sum c_j T_j(s), with T_{j+1} = 2s T_j - T_{j-1}.
  llvm::SmallVector<long double, 16> inS(n, 0.0L);
  llvm::SmallVector<long double, 16> previous(n, 0.0L), current(n, 0.0L);
  previous[0] = 1.0L; // T_0
  if (n > 1)
    current[1] = 1.0L; // T_1
  for (int j = 0; j < n; ++j) {
    long double c = 0;
    for (int k = 0; k < n; ++k)
      c += values[k] * std::cos(pi * j * (k + 0.5L) / n);
    c *= (j == 0 ? 1.0L : 2.0L) / n;
    const llvm::SmallVector<long double, 16>& tj = j == 0 ? previous : current;
    for (int i = 0; i < n; ++i)
      inS[i] += c * tj[i];
    if (j == 0)
      continue;
    llvm::SmallVector<long double, 16> next(n, 0.0L);
    for (int i = 0; i + 1 < n; ++i)
      next[i + 1] += 2 * current[i];
    for (int i = 0; i < n; ++i)
      next[i] -= previous[i];
    previous = current;
    current = next;
  }
  // s = alpha + beta v; expand sum inS[j] s^j by Horner in polynomials of v.
  long double alpha = -(hi + lo) / (hi - lo), beta = 2 / (hi - lo);
  llvm::SmallVector<long double, 16> inV(n, 0.0L);
  for (int j = n - 1; j >= 0; --j) {
    // inV = inV * (alpha + beta v) + inS[j]
    for (int i = n - 1; i >= 0; --i)
      inV[i] = inV[i] * alpha + (i > 0 ? inV[i - 1] * beta : 0.0L);
    inV[0] += inS[j];
  }
  return llvm::SmallVector<double, 16>(inV.begin(), inV.end());
}

/// q(r) = (e^r - 1 - r) / r^2, from its series where the quotient would
/// cancel to nothing (an odd number of interpolation nodes puts one at 0).
long double expm1Quotient(long double r) {
  if (std::fabs(r) < 1e-4L)
    return 0.5L + r / 6 + r * r / 24;
  return (std::expm1(r) - r) / (r * r);
}

llvm::ArrayRef<double> expPolynomial(const FloatFormat& f) {
  // f32: degree 6, within 4e-9 relatively, a thirtieth of an ulp. f64: the
  // first omitted Taylor term is below 1e-17.
  static const llvm::SmallVector<double, 16> forFloat =
      chebyshevInterpolant([](long double r) { return std::exp(r); }, -kLn2 / 2, kLn2 / 2, 6);
  static const llvm::SmallVector<double, 16> forDouble = inverseFactorials(0, 14);
  return f.type->isFloatTy() ? forFloat : forDouble;
}

llvm::ArrayRef<double> expm1Polynomial(const FloatFormat& f) {
  // f32: degree 5, within 1.4e-9 of q, an error scaled by |r| <= 0.35
  // against r. (Degree 4, within 6.5e-8, kept tanh within 2 ulp as well,
  // but saved no measurable time on the benchmark's pointwise chain.) f64:
  // the first omitted term, r^15/15! against r, is 3e-19.
  static const llvm::SmallVector<double, 16> forFloat =
      chebyshevInterpolant(expm1Quotient, -kLn2 / 2, kLn2 / 2, 5);
  static const llvm::SmallVector<double, 16> forDouble = inverseFactorials(2, 13);
  return f.type->isFloatTy() ? forFloat : forDouble;
}

llvm::ArrayRef<double> tableExpPolynomial() {
  // q(r) = (e^r - 1 - r) / r^2 on |r| <= ln2/32 to within 1e-5, an error
  // scaled by r^2 <= 4.7e-4 against e^r: below a tenth of an ulp.
  static const llvm::SmallVector<double, 16> coefficients =
      chebyshevInterpolant(expm1Quotient, -kLn2 / (2 * TableSize), kLn2 / (2 * TableSize), 1);
  return coefficients;
}

long double erfcx(long double x) { return std::exp(x * x) * std::erfc(x); }

/// erfcx(x) = e^(x^2) erfc(x) on [1, 4] as a polynomial in
/// t = (2x - 5) / 3 in [-1, 1]. erfcx is entire and slowly varying there,
/// so degree 12 is exact to 6e-9 relatively.
llvm::SmallVector<double, 16> erfcxOnOneToFour(int degree) {
  return chebyshevInterpolant([](long double t) { return erfcx((3 * t + 5) / 2); }, -1, 1, degree);
}

/// erf of a float. Below 1, its odd Taylor series; from 1, 1 - e^(-x^2)
/// erfcx(x): the error of e^(-x^2) from rounding x^2 is scaled by erfc(x) <
/// 0.16 there, so it stays below an ulp of the result.
Value* emitErfFloat(llvm::IRBuilder<>& b, const FloatFormat& f, Value* x) {
  Value* a = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  // erf(x) = 2/sqrt(pi) sum (-1)^n x^(2n+1) / (n! (2n+1)); at x = 1 the
  // terms after n = 10 add less than 1.3e-8.
  llvm::SmallVector<double, 16> taylor;
  double factorial = 1.0;
  for (int n = 0; n <= 10; ++n) {
    if (n > 0)
      factorial *= n;
    taylor.push_back((n % 2 ? -M_2_SQRTPI : M_2_SQRTPI) / (factorial * (2 * n + 1)));
  }
  Value* z = b.CreateFMul(a, a);
  Value* small = b.CreateFMul(a, horner(b, f, z, taylor));
  // erf(x) rounds to 1 in float from 3.92 on; clamping at 4 keeps the
  // polynomial in its interval.
  Value* saturated = b.CreateFCmpOGE(a, f.constant(4.0));
  Value* ac = b.CreateSelect(saturated, f.constant(4.0), a);
  Value* t = b.CreateFSub(b.CreateFMul(ac, f.constant(2.0 / 3.0)), f.constant(5.0 / 3.0));
  Value* erfcx = horner(b, f, t, erfcxOnOneToFour(12));
  Value* erfc = b.CreateFMul(emitExp(b, b.CreateFNeg(b.CreateFMul(ac, ac))), erfcx);
  Value* large = b.CreateFSub(f.constant(1.0), erfc);
  Value* r = b.CreateSelect(b.CreateFCmpOLT(a, f.constant(1.0)), small, large);
  // NaN fails both comparisons above and would come out as large; keep it.
  r = b.CreateSelect(isNaN(b, x), x, r);
  return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, r, x);
}

} // namespace

Value* codegen::emitErf(llvm::IRBuilder<>& b, Value* x) {
  FloatFormat f = FloatFormat::of(b, x->getType());
  if (f.type->isFloatTy())
    return emitErfFloat(b, f, x);
  Value* a = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  Value* saturated = b.CreateFCmpOGE(a, f.constant(4.0));
  Value* ac = b.CreateSelect(saturated, f.constant(4.0), a);
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
  Value* sum = b.CreateFMul(ac, horner(b, f, y, coefficients));
  Value* scale = b.CreateFMul(emitExp(b, b.CreateFNeg(y)), f.constant(M_2_SQRTPI));
  Value* r = b.CreateSelect(saturated, f.constant(1.0), b.CreateFMul(sum, scale));
  return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, r, x);
}

Value* codegen::emitGelu(llvm::IRBuilder<>& b, Value* x) {
  // ATen's formula, in its order: x / 2 (1 + erf(x / sqrt 2)), with
  // 1 + erf's cancellation for negative x. A more accurate form differs
  // where the program can see it: below about -5.5, 1 + erf rounds to 0 in
  // f32 and eager's gelu is -0.0, while the exact value is a tiny negative
  // number that floor, sign or a comparison with 0 tell apart (and that
  // bf16 and f16, which round the f32 result, keep).
  FloatFormat f = FloatFormat::of(b, x->getType());
  Value* e = emitErf(b, b.CreateFMul(x, f.constant(M_SQRT1_2)));
  return b.CreateFMul(b.CreateFMul(x, f.constant(0.5)), b.CreateFAdd(f.constant(1.0), e));
}
