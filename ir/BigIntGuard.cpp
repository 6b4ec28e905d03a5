//===- BigIntGuard.cpp - Equals guards on ints beyond 64 bits -------------===//
#include "ir/BigIntGuard.h"

#include "llvm/ADT/APInt.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>

namespace dync::ir {

namespace {

/// The magnitude spelled by \p digits, wide enough for one more (sign) bit.
std::optional<llvm::APInt> magnitudeOf(llvm::StringRef digits) {
  if (digits.empty() || !llvm::all_of(digits, llvm::isDigit))
    return std::nullopt;
  llvm::APInt magnitude;
  if (digits.getAsInteger(10, magnitude))
    return std::nullopt;
  return magnitude.zext(magnitude.getBitWidth() + 1);
}

/// The signed value of canonical decimal \p decimal, in as many bits as its
/// magnitude needs plus a sign bit.
llvm::APInt signedValueOf(llvm::StringRef decimal) {
  bool negative = decimal.consume_front("-");
  std::optional<llvm::APInt> magnitude = magnitudeOf(decimal);
  llvm::APInt value = magnitude ? *magnitude : llvm::APInt(1, 0);
  if (negative)
    value.negate();
  return value;
}

} // namespace

Guard equalsBigInt(SourcePtr source, std::string decimal) {
  Guard guard = Guard::equals(std::move(source), Argument::string(std::move(decimal)));
  guard.typeModule = "builtins";
  guard.typeQualname = "int";
  return guard;
}

std::optional<llvm::StringRef> bigIntOf(const Guard& guard) {
  if (guard.kind != GuardKind::Equals || !guard.constant ||
      guard.constant->kind() != Argument::Kind::String || guard.typeModule != "builtins" ||
      guard.typeQualname != "int")
    return std::nullopt;
  return llvm::StringRef(guard.constant->stringValue());
}

std::optional<std::string> canonicalDecimal(llvm::StringRef digits, bool negative) {
  if (digits.empty() || !llvm::all_of(digits, llvm::isDigit))
    return std::nullopt;
  llvm::StringRef significant = digits.ltrim('0');
  if (significant.empty())
    return std::string("0");
  return (negative ? "-" : "") + significant.str();
}

bool isBigIntDecimal(llvm::StringRef text) {
  llvm::StringRef digits = text;
  bool negative = digits.consume_front("-");
  if (digits.empty() || digits.front() == '0' || !llvm::all_of(digits, llvm::isDigit))
    return false;
  std::optional<llvm::APInt> magnitude = magnitudeOf(digits);
  if (!magnitude)
    return false;
  // int64_t holds magnitudes up to 2**63 - 1, and 2**63 when negative.
  llvm::APInt limit = llvm::APInt::getOneBitSet(std::max(magnitude->getBitWidth(), 65u), 63);
  llvm::APInt wide = magnitude->zext(limit.getBitWidth());
  return negative ? wide.ugt(limit) : wide.uge(limit);
}

std::vector<uint8_t> twosComplementBytes(llvm::StringRef decimal) {
  llvm::APInt value = signedValueOf(decimal);
  unsigned bytes = (value.getSignificantBits() + 7) / 8;
  value = value.sextOrTrunc(bytes * 8);
  std::vector<uint8_t> out(bytes);
  for (unsigned i = 0; i < bytes; ++i)
    out[i] = static_cast<uint8_t>(value.extractBitsAsZExtValue(8, 8 * i));
  return out;
}

std::string decimalOfTwosComplement(llvm::ArrayRef<uint8_t> bytes) {
  if (bytes.empty())
    return "0";
  std::vector<uint64_t> words((bytes.size() + 7) / 8, 0);
  for (size_t i = 0; i < bytes.size(); ++i)
    words[i / 8] |= uint64_t(bytes[i]) << (8 * (i % 8));
  llvm::APInt value(static_cast<unsigned>(bytes.size() * 8), words);
  llvm::SmallString<64> text;
  value.toString(text, 10, /*Signed=*/true);
  return text.str().str();
}

} // namespace dync::ir
