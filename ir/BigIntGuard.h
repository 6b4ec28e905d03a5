//===- BigIntGuard.h - Equals guards on ints beyond 64 bits -----*- C++ -*-===//
//
// An exact Python int that does not fit in int64_t (a random UUID's `.int`,
// `2**100`) is guarded by value like any int: `equals G['KEY'].int :
// 1267650600228229401496703205376`. The text form writes its decimal digits
// (with `-` when negative), as for any int; the parser gives a literal that
// does not fit in int64_t this guard.
//
// In memory it is an Equals guard whose constant is a string holding the
// canonical decimal (no leading zeros, `-` for a negative number) and whose
// typeModule and typeQualname are `builtins` and `int`: the type the
// constant stands for. Guard.h's fields are enough, so the guard adds no
// kind of its own. Codegen compares the object with the number's
// two's-complement bytes (dync_py_equals_int_bytes), never calling
// Python-level code.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Guard.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dync::ir {

/// `equals SOURCE : DECIMAL` for the int \p decimal, which must be the
/// canonical decimal of a number outside int64_t (isBigIntDecimal).
Guard equalsBigInt(SourcePtr source, std::string decimal);

/// The decimal digits of an equals guard on an int beyond 64 bits; nullopt
/// for any other guard.
std::optional<llvm::StringRef> bigIntOf(const Guard& guard);

/// Whether \p text is the canonical decimal (`-`, then digits without a
/// leading zero) of an integer that does not fit in int64_t.
bool isBigIntDecimal(llvm::StringRef text);

/// The canonical decimal of the integer spelled by \p digits (decimal
/// digits, leading zeros allowed) negated when \p negative; nullopt when
/// \p digits is not all digits.
std::optional<std::string> canonicalDecimal(llvm::StringRef digits, bool negative);

/// The number's two's complement, little-endian, in the fewest bytes that
/// hold it with its sign (what `int.to_bytes(n, "little", signed=True)`
/// gives for the least such n). \p decimal is a canonical decimal.
std::vector<uint8_t> twosComplementBytes(llvm::StringRef decimal);

/// The canonical decimal of the signed little-endian two's complement
/// \p bytes (at least one byte).
std::string decimalOfTwosComplement(llvm::ArrayRef<uint8_t> bytes);

} // namespace dync::ir
