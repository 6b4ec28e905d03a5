//===- ExceptionTable.h - co_exceptiontable reader and writer --------------===//
//
// CPython 3.11 stores exception handling as a table of varint-encoded rows
// (start, length, target, depth<<1 | lasti), offsets in code units.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace dync::bytecode {

/// A table row as stored: offsets in code units, `end` exclusive.
struct RawExceptionEntry {
  uint32_t start = 0;
  uint32_t end = 0;
  uint32_t target = 0;
  uint32_t depth = 0;
  bool pushLasti = false;

  friend bool operator==(const RawExceptionEntry&, const RawExceptionEntry&) = default;
};

/// The rows of \p bytes, in table order; an error for a malformed table.
llvm::Expected<std::vector<RawExceptionEntry>> parseExceptionTable(llvm::ArrayRef<uint8_t> bytes);
/// Writes \p entries in the given order, as CPython's assembler would; each
/// entry must have start <= end.
std::vector<uint8_t> writeExceptionTable(llvm::ArrayRef<RawExceptionEntry> entries);

} // namespace dync::bytecode
