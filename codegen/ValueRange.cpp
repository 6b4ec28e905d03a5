//===- ValueRange.cpp - Bounds on the values a kernel element takes -------===//
#include "codegen/ValueRange.h"

#include <algorithm>
#include <cmath>

using namespace dync;
using namespace dync::codegen;
using ir::ElementOp;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// 2^-20 relative: 16 ulp of f32, far more of f64.
constexpr double kMargin = 0x1p-20;

/// [lo, hi] moved outward by the margin; NaN bounds (inf - inf, 0 * inf)
/// give no bounds at all. Zero stays zero: a result bounded by an exact
/// zero (a product with 0, relu) is that zero.
ValueRange widened(double lo, double hi) {
  if (std::isnan(lo) || std::isnan(hi))
    return ValueRange::all();
  return {lo - std::fabs(lo) * kMargin, hi + std::fabs(hi) * kMargin};
}

/// \p r intersected with [a, b], the exact bounds of a function's values.
ValueRange clampedTo(ValueRange r, double a, double b) {
  return {std::clamp(r.lo, a, b), std::clamp(r.hi, a, b)};
}

ValueRange product(ValueRange x, ValueRange y) {
  double p[] = {x.lo * y.lo, x.lo * y.hi, x.hi * y.lo, x.hi * y.hi};
  if (std::any_of(std::begin(p), std::end(p), [](double v) { return std::isnan(v); }))
    return ValueRange::all();
  return widened(*std::min_element(std::begin(p), std::end(p)),
                 *std::max_element(std::begin(p), std::end(p)));
}

/// A function increasing on its whole domain, applied to the bounds.
template <typename F> ValueRange increasing(ValueRange x, F f) { return widened(f(x.lo), f(x.hi)); }

} // namespace

double ValueRange::maxMagnitude() const { return std::max(std::fabs(lo), std::fabs(hi)); }

namespace {

/// The bounds each operation's meaning gives, in exact arithmetic (widened
/// for rounding).
ValueRange rule(ElementOp op, llvm::ArrayRef<std::optional<ValueRange>> operands) {
  auto at = [&](size_t i) {
    return i < operands.size() && operands[i] ? *operands[i] : ValueRange::all();
  };
  ValueRange x = at(0);
  switch (op) {
  case ElementOp::Add:
  case ElementOp::Sub: {
    ValueRange y = at(1);
    if (operands.size() > 2 && operands[2])
      y = product(*operands[2], y);
    if (op == ElementOp::Add)
      return widened(x.lo + y.lo, x.hi + y.hi);
    return widened(x.lo - y.hi, x.hi - y.lo);
  }
  case ElementOp::Mul:
    return product(x, at(1));
  case ElementOp::Div: {
    ValueRange y = at(1);
    if (y.lo <= 0 && y.hi >= 0)
      return ValueRange::all();
    return product(x, widened(1 / y.hi, 1 / y.lo));
  }
  case ElementOp::Neg:
    return {-x.hi, -x.lo};
  case ElementOp::Abs:
    if (x.lo >= 0)
      return x;
    if (x.hi <= 0)
      return {-x.hi, -x.lo};
    return {0, x.maxMagnitude()};
  case ElementOp::Square: {
    // The product's rule treats the two factors as independent.
    ValueRange p = product(x, x);
    return p.lo < 0 ? widened(0, x.maxMagnitude() * x.maxMagnitude()) : p;
  }
  case ElementOp::Relu:
    return {std::max(x.lo, 0.0), std::max(x.hi, 0.0)};
  case ElementOp::Maximum:
    return {std::max(x.lo, at(1).lo), std::max(x.hi, at(1).hi)};
  case ElementOp::Minimum:
    return {std::min(x.lo, at(1).lo), std::min(x.hi, at(1).hi)};
  case ElementOp::Clamp: {
    // min(max(x, lo), hi), increasing in each argument.
    ValueRange lo = operands.size() > 1 && operands[1] ? *operands[1] : ValueRange{-kInf, -kInf};
    ValueRange hi = operands.size() > 2 && operands[2] ? *operands[2] : ValueRange{kInf, kInf};
    return {std::min(std::max(x.lo, lo.lo), hi.lo), std::min(std::max(x.hi, lo.hi), hi.hi)};
  }
  case ElementOp::Where: {
    ValueRange a = at(1), b = at(2);
    return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
  }
  case ElementOp::Convert:
    return x;
  case ElementOp::Exp:
    return clampedTo(increasing(x, [](double v) { return std::exp(v); }), 0, kInf);
  case ElementOp::Sigmoid:
    return clampedTo(increasing(x, [](double v) { return 1 / (1 + std::exp(-v)); }), 0, 1);
  case ElementOp::Tanh:
    return clampedTo(increasing(x, [](double v) { return std::tanh(v); }), -1, 1);
  case ElementOp::Erf:
    return clampedTo(increasing(x, [](double v) { return std::erf(v); }), -1, 1);
  case ElementOp::Sqrt:
    return clampedTo(increasing(clampedTo(x, 0, kInf), [](double v) { return std::sqrt(v); }), 0,
                     kInf);
  default:
    return ValueRange::all();
  }
}

/// \p r as values of \p dtype can hold it: a bound beyond the largest
/// finite value may be infinity, and one below the smallest normal
/// magnitude may be zero (results that small are rounded to few bits, or
/// flushed).
ValueRange representable(ValueRange r, ir::DType dtype) {
  double max = dtype == ir::DType::F32 ? double(std::numeric_limits<float>::max())
                                       : std::numeric_limits<double>::max();
  double minNormal = dtype == ir::DType::F32 ? double(std::numeric_limits<float>::min())
                                             : std::numeric_limits<double>::min();
  if (r.hi > max)
    r.hi = kInf;
  if (r.lo < -max)
    r.lo = -kInf;
  if (r.lo > 0 && r.lo < minNormal)
    r.lo = 0;
  if (r.hi < 0 && r.hi > -minNormal)
    r.hi = 0;
  return r;
}

} // namespace

ValueRange codegen::resultRange(ElementOp op, llvm::ArrayRef<std::optional<ValueRange>> operands,
                                ir::DType result) {
  if (result != ir::DType::F32 && result != ir::DType::F64)
    return ValueRange::all();
  return representable(rule(op, operands), result);
}
