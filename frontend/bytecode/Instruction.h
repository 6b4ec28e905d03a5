//===- Instruction.h - One decoded bytecode instruction --------------------===//
#pragma once

#include <cstdint>
#include <vector>

namespace dync::bytecode {

/// A source range as CPython's location table records it; -1 means "none".
struct SourcePosition {
  int line = -1;
  int endLine = -1;
  int column = -1;
  int endColumn = -1;

  friend bool operator==(const SourcePosition&, const SourcePosition&) = default;
};

/// An instruction with its EXTENDED_ARG prefixes folded into `arg` and its
/// inline caches accounted for in `size`. Offsets are in bytes, as in `dis`.
struct Instruction {
  uint8_t opcode = 0;
  uint32_t arg = 0;
  /// Byte offset of the first code unit: the first EXTENDED_ARG prefix if
  /// there is one. Jumps and exception table entries land here.
  uint32_t startOffset = 0;
  /// Number of EXTENDED_ARG prefixes in the encoding this was decoded from.
  /// The encoder ignores it (and startOffset): it lays the code out anew.
  uint8_t extendedArgs = 0;
  /// Inline cache code units following the opcode word (the encoder takes
  /// the count from the opcode table).
  uint8_t cacheEntries = 0;
  /// Index of the target instruction for jumps, -1 otherwise.
  int32_t jumpTarget = -1;
  SourcePosition position;

  /// Byte offset of the opcode word itself, as `dis` reports it.
  uint32_t opcodeOffset() const { return startOffset + 2u * extendedArgs; }
  /// Total size in code units: prefixes, opcode word and caches.
  uint32_t sizeInCodeUnits() const { return extendedArgs + 1u + cacheEntries; }
  uint32_t endOffset() const { return startOffset + 2u * sizeInCodeUnits(); }
};

/// One row of `co_exceptiontable`, with its ranges resolved to instructions:
/// instructions [start, end) are protected and `handler` receives control.
struct ExceptionRegion {
  uint32_t start = 0;
  uint32_t end = 0;
  uint32_t handler = 0;
  /// Stack depth the handler sees before `lasti` and the exception are pushed.
  uint32_t depth = 0;
  bool pushLasti = false;

  friend bool operator==(const ExceptionRegion&, const ExceptionRegion&) = default;
};

/// A function body in decoded form: what the symbolic interpreter reads and
/// what the encoder writes back.
struct DecodedCode {
  std::vector<Instruction> instructions;
  std::vector<ExceptionRegion> exceptionRegions;
  int firstLine = 0;
};

} // namespace dync::bytecode
