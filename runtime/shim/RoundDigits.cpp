//===- RoundDigits.cpp - round(x, ndigits) of a float, as CPython's -------===//
//
// CPython rounds a float to ndigits decimal places by its correctly rounded
// dtoa (mode 3): the exact binary value is rounded half to even at 10**-n,
// and the decimal digits are read back with a correctly rounded strtod.
// Here the exact decimal expansion comes from the C library's printf (exact
// at any precision, as glibc's is), the rounding is done on those digits,
// and strtod reads the result back: the same decimal number, so the same
// double.
//
//===----------------------------------------------------------------------===//
#include "runtime/shim/dync_shim.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

// CPython's bounds: beyond them x rounds to itself, or to a signed zero.
constexpr int64_t NdigitsMax = 323;  // (DBL_MANT_DIG - DBL_MIN_EXP) * log10(2)
constexpr int64_t NdigitsMin = -308; // -(DBL_MAX_EXP + 1) * log10(2)

// A double's exact decimal expansion has at most 767 significant digits.
constexpr int ExactDigits = 800;

/// The digits kept at 10**place and above, rounded half to even; \p digits
/// are all the significant digits of the magnitude d.ddd...e\p exponent.
/// Returns the kept digits (one more after a carry), the last at 10**place;
/// empty for zero.
std::string roundedDigits(const std::string& digits, int exponent, int64_t place) {
  int64_t kept = exponent - place + 1; // how many digits lie at or above 10**place
  if (kept < 0)
    return ""; // below half of 10**place
  auto nonzeroFrom = [&](size_t from) {
    return digits.find_first_not_of('0', from) != std::string::npos;
  };
  std::string result = digits.substr(0, static_cast<size_t>(kept));
  char next = static_cast<size_t>(kept) < digits.size() ? digits[kept] : '0';
  bool up = next > '5' || (next == '5' && nonzeroFrom(static_cast<size_t>(kept) + 1));
  if (next == '5' && !up) // a tie: to the even neighbour
    up = !result.empty() && (result.back() - '0') % 2 == 1;
  if (up) {
    size_t i = result.size();
    while (i > 0 && result[i - 1] == '9')
      result[--i] = '0';
    if (i == 0)
      result.insert(result.begin(), '1');
    else
      ++result[i - 1];
  }
  if (result.find_first_not_of('0') == std::string::npos)
    return "";
  return result;
}

} // namespace

double dync_round_digits(double x, int64_t ndigits, int* overflow) {
  *overflow = 0;
  if (!std::isfinite(x) || ndigits > NdigitsMax)
    return x;
  if (ndigits < NdigitsMin)
    return 0.0 * x;
  // d.ddd...e[+-]E, exact.
  char text[ExactDigits + 32];
  std::snprintf(text, sizeof text, "%.*e", ExactDigits, std::fabs(x));
  std::string mantissa(text, std::strchr(text, 'e'));
  int exponent = std::atoi(std::strchr(text, 'e') + 1);
  std::string digits = mantissa.substr(0, 1) + mantissa.substr(2);
  std::string kept = roundedDigits(digits, exponent, -ndigits);
  // Zero keeps x's sign, as CPython's "-0e..." does.
  std::string decimal = (std::signbit(x) ? "-" : "") + (kept.empty() ? std::string("0") : kept) +
                        "e" + std::to_string(-ndigits);
  double rounded = std::strtod(decimal.c_str(), nullptr);
  if (std::isinf(rounded))
    *overflow = 1;
  return rounded;
}
