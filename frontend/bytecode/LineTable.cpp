//===- LineTable.cpp - co_linetable (PEP 626/657 locations) ---------------===//
//
// A sequence of entries, each covering 1 to 8 code units. The first byte of
// an entry is 1cccclll: c the form, l the length minus one. Line numbers are
// deltas from the line of the previous entry that had one (co_firstlineno at
// the start); numbers after the first byte are varints, least significant
// six bits first, 0x40 meaning more follow, signed ones zigzag-like with the
// sign in bit 0. No byte but an entry's first has bit 7 set.
//
//   forms 0-9   short: same line, column = form*8 + hi nibble of the next
//               byte, end column = column + its low nibble
//   forms 10-12 one line: line += form-10, then column and end column bytes
//   form 13     no columns: line += signed varint
//   form 14     long: line += signed varint, end line = line + varint,
//               column + 1 and end column + 1 as varints (0 means none)
//   form 15     no location at all
//
//===----------------------------------------------------------------------===//
#include "frontend/bytecode/LineTable.h"

#include <algorithm>
#include <limits>

namespace dync::bytecode {

namespace {

constexpr uint8_t kEntryStart = 0x80;
constexpr unsigned kFormShift = 3;
constexpr uint8_t kFormMask = 0x0F;
constexpr uint8_t kLengthMask = 0x07;
constexpr unsigned kMaxEntryUnits = 8;

constexpr uint8_t kChunkBits = 6;
constexpr uint8_t kChunkMask = 0x3F;
constexpr uint8_t kContinues = 0x40;

enum Form : uint8_t {
  kShortLast = 9,
  kOneLine0 = 10,
  kOneLine2 = 12,
  kNoColumns = 13,
  kLong = 14,
  kNone = 15,
};

/// The short form's limits: a column below 80 (ten groups of eight) and an
/// end at most 15 columns further on.
constexpr int kShortColumnLimit = 80;
constexpr int kShortWidthLimit = 16;
/// The one-line forms store columns in one byte each, below 0x80.
constexpr int kOneLineColumnLimit = 128;
constexpr int kOneLineMaxDelta = 2;

class Reader {
public:
  explicit Reader(llvm::ArrayRef<uint8_t> bytes) : bytes_(bytes) {}

  bool atEnd() const { return position_ == bytes_.size(); }
  size_t position() const { return position_; }

  llvm::Expected<uint8_t> byte() {
    if (position_ == bytes_.size())
      return llvm::createStringError("line table: truncated entry at byte %zu", position_);
    uint8_t value = bytes_[position_];
    if (value & kEntryStart)
      return llvm::createStringError("line table: unexpected entry start at byte %zu", position_);
    ++position_;
    return value;
  }

  uint8_t entryStart() { return bytes_[position_++]; }

  llvm::Expected<uint64_t> varint() {
    uint64_t value = 0;
    for (unsigned shift = 0;; shift += kChunkBits) {
      if (shift > 36)
        return llvm::createStringError("line table: varint too long at byte %zu", position_);
      auto next = byte();
      if (!next)
        return next.takeError();
      value |= uint64_t(*next & kChunkMask) << shift;
      if (!(*next & kContinues))
        return value;
    }
  }

  llvm::Expected<int64_t> signedVarint() {
    auto value = varint();
    if (!value)
      return value.takeError();
    int64_t magnitude = static_cast<int64_t>(*value >> 1);
    return (*value & 1) ? -magnitude : magnitude;
  }

private:
  llvm::ArrayRef<uint8_t> bytes_;
  size_t position_ = 0;
};

llvm::Expected<int> toInt(int64_t value, size_t entryByte) {
  if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max())
    return llvm::createStringError("line table: number out of range in the entry at byte %zu",
                                   entryByte);
  return static_cast<int>(value);
}

/// Reads one entry's position; \p line is the running line number.
llvm::Expected<SourcePosition> readEntry(Reader& reader, uint8_t form, size_t entryByte,
                                         int& line) {
  SourcePosition position;
  if (form == kNone)
    return position;
  if (form <= kShortLast) {
    auto columns = reader.byte();
    if (!columns)
      return columns.takeError();
    position.line = position.endLine = line;
    position.column = form * 8 + (*columns >> 4);
    position.endColumn = position.column + (*columns & 0x0F);
    return position;
  }
  if (form <= kOneLine2) {
    auto column = reader.byte();
    if (!column)
      return column.takeError();
    auto endColumn = reader.byte();
    if (!endColumn)
      return endColumn.takeError();
    line += form - kOneLine0;
    position.line = position.endLine = line;
    position.column = *column;
    position.endColumn = *endColumn;
    return position;
  }
  auto delta = reader.signedVarint();
  if (!delta)
    return delta.takeError();
  auto newLine = toInt(int64_t(line) + *delta, entryByte);
  if (!newLine)
    return newLine.takeError();
  line = *newLine;
  position.line = position.endLine = line;
  if (form == kNoColumns)
    return position;

  int64_t fields[3];
  for (int64_t& field : fields) {
    auto value = reader.varint();
    if (!value)
      return value.takeError();
    field = static_cast<int64_t>(*value);
  }
  auto endLine = toInt(int64_t(line) + fields[0], entryByte);
  auto column = toInt(fields[1] - 1, entryByte);
  auto endColumn = toInt(fields[2] - 1, entryByte);
  if (!endLine || !column || !endColumn) {
    llvm::consumeError(endLine.takeError());
    llvm::consumeError(column.takeError());
    llvm::consumeError(endColumn.takeError());
    return llvm::createStringError("line table: number out of range in the entry at byte %zu",
                                   entryByte);
  }
  position.endLine = *endLine;
  position.column = *column;
  position.endColumn = *endColumn;
  return position;
}

class Writer {
public:
  explicit Writer(int firstLine) : line_(firstLine) {}

  llvm::Error entry(const SourcePosition& position, unsigned units);
  std::vector<uint8_t> take() { return std::move(out_); }

private:
  void start(uint8_t form, unsigned units) {
    out_.push_back(kEntryStart | (form << kFormShift) | (units - 1));
  }
  void varint(uint64_t value) {
    while (value > kChunkMask) {
      out_.push_back(kContinues | (value & kChunkMask));
      value >>= kChunkBits;
    }
    out_.push_back(static_cast<uint8_t>(value));
  }
  void signedVarint(int64_t value) {
    varint(value < 0 ? (uint64_t(-value) << 1) | 1 : uint64_t(value) << 1);
  }

  std::vector<uint8_t> out_;
  int line_;
};

/// Chooses the form the way CPython 3.11's assembler does
/// (write_location_info_entry): no location; no columns; the short form on
/// the same line; a one-line form a little further down; else the long form.
llvm::Error Writer::entry(const SourcePosition& position, unsigned units) {
  if (position.line < 0) {
    start(kNone, units);
    return llvm::Error::success();
  }
  int column = position.column;
  int endColumn = position.endColumn;
  if (column < -1 || endColumn < -1)
    return llvm::createStringError("line table: column %d-%d cannot be written", column, endColumn);
  int64_t lineDelta = int64_t(position.line) - line_;
  bool sameLine = position.endLine == position.line;
  if (column < 0 || endColumn < 0) {
    if (sameLine || position.endLine == -1) {
      start(kNoColumns, units);
      signedVarint(lineDelta);
      line_ = position.line;
      return llvm::Error::success();
    }
  } else if (sameLine) {
    if (lineDelta == 0 && column < kShortColumnLimit && endColumn - column < kShortWidthLimit &&
        endColumn >= column) {
      start(static_cast<uint8_t>(column / 8), units);
      out_.push_back(static_cast<uint8_t>(((column % 8) << 4) | (endColumn - column)));
      return llvm::Error::success();
    }
    if (lineDelta >= 0 && lineDelta <= kOneLineMaxDelta && column < kOneLineColumnLimit &&
        endColumn < kOneLineColumnLimit) {
      start(static_cast<uint8_t>(kOneLine0 + lineDelta), units);
      out_.push_back(static_cast<uint8_t>(column));
      out_.push_back(static_cast<uint8_t>(endColumn));
      line_ = position.line;
      return llvm::Error::success();
    }
  }
  if (position.endLine < position.line)
    return llvm::createStringError("line table: position ends on line %d before it starts on "
                                   "line %d",
                                   position.endLine, position.line);
  start(kLong, units);
  signedVarint(lineDelta);
  varint(uint64_t(int64_t(position.endLine) - position.line));
  varint(uint64_t(int64_t(column) + 1));
  varint(uint64_t(int64_t(endColumn) + 1));
  line_ = position.line;
  return llvm::Error::success();
}

} // namespace

llvm::Expected<std::vector<SourcePosition>> parseLineTable(llvm::ArrayRef<uint8_t> bytes,
                                                           int firstLine, size_t codeUnits) {
  std::vector<SourcePosition> positions;
  positions.reserve(codeUnits);
  Reader reader(bytes);
  int line = firstLine;
  while (!reader.atEnd()) {
    size_t entryByte = reader.position();
    uint8_t first = reader.entryStart();
    if (!(first & kEntryStart))
      return llvm::createStringError("line table: entry at byte %zu lacks its start bit",
                                     entryByte);
    uint8_t form = (first >> kFormShift) & kFormMask;
    unsigned units = (first & kLengthMask) + 1;
    auto position = readEntry(reader, form, entryByte, line);
    if (!position)
      return position.takeError();
    if (positions.size() + units > codeUnits)
      return llvm::createStringError(
          "line table: the entry at byte %zu goes past the end of the code (%zu code units)",
          entryByte, codeUnits);
    positions.insert(positions.end(), units, *position);
  }
  if (positions.size() != codeUnits)
    return llvm::createStringError("line table: covers %zu code units of %zu", positions.size(),
                                   codeUnits);
  return positions;
}

llvm::Expected<std::vector<uint8_t>> writeLineTable(llvm::ArrayRef<Instruction> instructions,
                                                    int firstLine) {
  Writer writer(firstLine);
  for (const Instruction& instruction : instructions) {
    // The assembler writes one instruction at a time (prefixes and caches
    // included), in entries of at most eight code units.
    for (unsigned left = instruction.sizeInCodeUnits(); left > 0;) {
      unsigned units = std::min(left, kMaxEntryUnits);
      if (llvm::Error error = writer.entry(instruction.position, units))
        return error;
      left -= units;
    }
  }
  return writer.take();
}

} // namespace dync::bytecode
