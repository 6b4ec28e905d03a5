//===- PythonInt.h - Python's integer division on int64 --------*- C++ -*-===//
//
// C++ `/` and `%` truncate toward zero; Python's `//` rounds toward negative
// infinity and its `%` takes the divisor's sign. Sizes are written with
// Python's meaning, so folding and evaluation use these.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cassert>
#include <cstdint>
#include <limits>
#include <optional>

namespace dync::ir {

/// `a // b` for b != 0; nullopt when the quotient does not fit (INT64_MIN // -1).
inline std::optional<int64_t> pythonFloorDiv(int64_t a, int64_t b) {
  assert(b != 0 && "division by zero");
  if (b == -1)
    return a == std::numeric_limits<int64_t>::min() ? std::nullopt : std::optional(-a);
  int64_t quotient = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0)))
    --quotient;
  return quotient;
}

/// `a % b` for b != 0; always representable.
inline int64_t pythonMod(int64_t a, int64_t b) {
  assert(b != 0 && "division by zero");
  if (b == -1)
    return 0;
  int64_t remainder = a % b;
  if (remainder != 0 && ((remainder < 0) != (b < 0)))
    remainder += b;
  return remainder;
}

} // namespace dync::ir
