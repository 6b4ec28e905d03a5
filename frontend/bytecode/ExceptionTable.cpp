//===- ExceptionTable.cpp - co_exceptiontable reader and writer -----------===//
//
// Each row is four unsigned numbers: start, length, target (code units) and
// depth << 1 | lasti. A number is written most significant chunk first, six
// bits per byte, with 0x40 on every byte but its last; the first byte of a
// row also carries 0x80, which is how a reader finds row starts.
//
//===----------------------------------------------------------------------===//
#include "frontend/bytecode/ExceptionTable.h"

#include <limits>

namespace dync::bytecode {

namespace {

constexpr uint8_t kChunkBits = 6;
constexpr uint8_t kChunkMask = (1u << kChunkBits) - 1;
constexpr uint8_t kContinues = 0x40;
constexpr uint8_t kRowStart = 0x80;
/// The interpreter's own numbers are below 2**30 (five chunks); six chunks
/// hold any 32-bit offset and a 32-bit depth with its lasti bit.
constexpr unsigned kMaxChunks = 6;

class Reader {
public:
  explicit Reader(llvm::ArrayRef<uint8_t> bytes) : bytes_(bytes) {}

  bool atEnd() const { return position_ == bytes_.size(); }

  llvm::Expected<uint64_t> number(bool rowStart) {
    size_t begin = position_;
    uint64_t value = 0;
    for (unsigned chunk = 0;; ++chunk) {
      if (position_ == bytes_.size())
        return llvm::createStringError("exception table: truncated number at byte %zu", begin);
      if (chunk == kMaxChunks)
        return llvm::createStringError("exception table: number at byte %zu is too long", begin);
      uint8_t byte = bytes_[position_];
      bool marked = byte & kRowStart;
      if (marked != (rowStart && chunk == 0))
        return llvm::createStringError(
            marked ? "exception table: row starts inside a row at byte %zu"
                   : "exception table: row does not start with a marked byte at byte %zu",
            position_);
      ++position_;
      value = (value << kChunkBits) | (byte & kChunkMask);
      if (!(byte & kContinues))
        return value;
    }
  }

private:
  llvm::ArrayRef<uint8_t> bytes_;
  size_t position_ = 0;
};

void writeNumber(std::vector<uint8_t>& out, uint64_t value, bool rowStart) {
  unsigned chunks = 1;
  while (chunks < kMaxChunks && (value >> (kChunkBits * chunks)) != 0)
    ++chunks;
  for (unsigned chunk = chunks; chunk-- > 0;) {
    uint8_t byte = (value >> (kChunkBits * chunk)) & kChunkMask;
    if (chunk != 0)
      byte |= kContinues;
    if (rowStart && chunk == chunks - 1)
      byte |= kRowStart;
    out.push_back(byte);
  }
}

} // namespace

llvm::Expected<std::vector<RawExceptionEntry>> parseExceptionTable(llvm::ArrayRef<uint8_t> bytes) {
  std::vector<RawExceptionEntry> entries;
  Reader reader(bytes);
  while (!reader.atEnd()) {
    uint64_t fields[4];
    for (unsigned field = 0; field < 4; ++field) {
      auto value = reader.number(field == 0);
      if (!value)
        return value.takeError();
      fields[field] = *value;
    }
    constexpr uint64_t kMax = std::numeric_limits<uint32_t>::max();
    if (fields[0] + fields[1] > kMax || fields[2] > kMax || (fields[3] >> 1) > kMax)
      return llvm::createStringError("exception table: row %zu does not fit 32 bits",
                                     entries.size());
    RawExceptionEntry entry;
    entry.start = static_cast<uint32_t>(fields[0]);
    entry.end = static_cast<uint32_t>(fields[0] + fields[1]);
    entry.target = static_cast<uint32_t>(fields[2]);
    entry.depth = static_cast<uint32_t>(fields[3] >> 1);
    entry.pushLasti = fields[3] & 1;
    entries.push_back(entry);
  }
  return entries;
}

std::vector<uint8_t> writeExceptionTable(llvm::ArrayRef<RawExceptionEntry> entries) {
  std::vector<uint8_t> out;
  for (const RawExceptionEntry& entry : entries) {
    writeNumber(out, entry.start, /*rowStart=*/true);
    writeNumber(out, entry.end - entry.start, false);
    writeNumber(out, entry.target, false);
    writeNumber(out, (uint64_t(entry.depth) << 1) | (entry.pushLasti ? 1u : 0u), false);
  }
  return out;
}

} // namespace dync::bytecode
