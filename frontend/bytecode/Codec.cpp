//===- Codec.cpp - Bytecode to instructions and back -----------------------===//
#include "frontend/bytecode/Codec.h"

#include "frontend/bytecode/ExceptionTable.h"
#include "frontend/bytecode/LineTable.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"

namespace dync::bytecode {

namespace {

constexpr uint32_t kCodeUnitBytes = 2;
/// Three prefixes and the opcode word carry 32 bits of argument.
constexpr uint8_t kMaxExtendedArgs = 3;

/// Byte offset a jump lands on, by dis's rules, or an error if it is outside
/// the 32-bit range.
llvm::Expected<uint32_t> jumpTargetOffset(const Instruction& jump, const OpcodeInfo& info) {
  int64_t afterOpcode = int64_t(jump.opcodeOffset()) + kCodeUnitBytes;
  int64_t distance = int64_t(jump.arg) * kCodeUnitBytes;
  int64_t target = 0;
  switch (info.jump) {
  case JumpDirection::Forward:
    target = afterOpcode + distance;
    break;
  case JumpDirection::Backward:
    target = afterOpcode - distance;
    break;
  case JumpDirection::Absolute:
    target = distance;
    break;
  case JumpDirection::None:
    break;
  }
  if (target < 0 || target > UINT32_MAX)
    return llvm::createStringError("%s at offset %u jumps outside the code", info.name.c_str(),
                                   jump.opcodeOffset());
  return static_cast<uint32_t>(target);
}

/// The jump argument that makes \p jump land on \p target; the direction is
/// the opcode's, so a target on the wrong side is an error.
llvm::Expected<uint32_t> jumpArgument(const Instruction& jump, const OpcodeInfo& info,
                                      uint32_t target) {
  int64_t afterOpcode = int64_t(jump.opcodeOffset()) + kCodeUnitBytes;
  int64_t distance = 0;
  switch (info.jump) {
  case JumpDirection::Forward:
    distance = int64_t(target) - afterOpcode;
    break;
  case JumpDirection::Backward:
    distance = afterOpcode - int64_t(target);
    break;
  case JumpDirection::Absolute:
  case JumpDirection::None:
    distance = target;
    break;
  }
  if (distance < 0)
    return llvm::createStringError("%s at offset %u cannot reach offset %u in its direction",
                                   info.name.c_str(), jump.opcodeOffset(), target);
  return static_cast<uint32_t>(distance / kCodeUnitBytes);
}

/// The fewest EXTENDED_ARG prefixes that carry \p arg.
uint8_t prefixesFor(uint32_t arg) {
  uint8_t prefixes = 0;
  while (prefixes < kMaxExtendedArgs && (arg >> (8 * (prefixes + 1))) != 0)
    ++prefixes;
  return prefixes;
}

class Decoder {
public:
  Decoder(const RawCode& raw, const OpcodeTable& opcodes) : raw_(raw), opcodes_(opcodes) {}

  llvm::Expected<DecodedCode> run();

private:
  llvm::Error readInstructions(llvm::ArrayRef<SourcePosition> positions);
  llvm::Error resolveJumps();
  llvm::Error resolveExceptionTable();
  /// The instruction starting at \p unit, if one does.
  std::optional<uint32_t> instructionAt(uint64_t unit) const {
    if (unit >= startsAt_.size() || startsAt_[unit] < 0)
      return std::nullopt;
    return static_cast<uint32_t>(startsAt_[unit]);
  }

  const RawCode& raw_;
  const OpcodeTable& opcodes_;
  DecodedCode code_;
  /// Instruction index per code unit where one starts, else -1; one extra
  /// slot for the end of the code.
  std::vector<int32_t> startsAt_;
};

llvm::Expected<DecodedCode> Decoder::run() {
  if (raw_.code.size() % kCodeUnitBytes != 0)
    return llvm::createStringError("co_code has an odd number of bytes (%zu)", raw_.code.size());
  size_t units = raw_.code.size() / kCodeUnitBytes;
  auto positions = parseLineTable(raw_.lineTable, raw_.firstLine, units);
  if (!positions)
    return positions.takeError();
  code_.firstLine = raw_.firstLine;
  startsAt_.assign(units + 1, -1);
  if (llvm::Error error = readInstructions(*positions))
    return error;
  if (llvm::Error error = resolveJumps())
    return error;
  if (llvm::Error error = resolveExceptionTable())
    return error;
  return std::move(code_);
}

llvm::Error Decoder::readInstructions(llvm::ArrayRef<SourcePosition> positions) {
  const std::vector<uint8_t>& bytes = raw_.code;
  size_t units = bytes.size() / kCodeUnitBytes;
  size_t unit = 0;
  while (unit < units) {
    Instruction instruction;
    instruction.startOffset = static_cast<uint32_t>(unit * kCodeUnitBytes);
    const OpcodeInfo* info = nullptr;
    uint32_t arg = 0;
    for (;;) {
      uint8_t opcode = bytes[unit * kCodeUnitBytes];
      info = opcodes_.lookup(opcode);
      if (!info)
        return llvm::createStringError("unknown opcode %u at offset %zu", opcode,
                                       unit * kCodeUnitBytes);
      arg = (arg << 8) | bytes[unit * kCodeUnitBytes + 1];
      if (opcode != opcodes_.extendedArg())
        break;
      if (instruction.extendedArgs == kMaxExtendedArgs)
        return llvm::createStringError("more than %u EXTENDED_ARG prefixes at offset %u",
                                       kMaxExtendedArgs, instruction.startOffset);
      ++instruction.extendedArgs;
      if (++unit == units)
        return llvm::createStringError("code ends after EXTENDED_ARG at offset %zu",
                                       (unit - 1) * kCodeUnitBytes);
    }
    instruction.opcode = info->code;
    instruction.arg = arg;
    instruction.cacheEntries = info->cacheEntries;
    instruction.position = positions[unit];
    ++unit;
    if (unit + info->cacheEntries > units)
      return llvm::createStringError(
          "code ends inside the inline cache of %s at offset %u (needs %u entries)",
          info->name.c_str(), instruction.opcodeOffset(), info->cacheEntries);
    for (unsigned entry = 0; entry < info->cacheEntries; ++entry, ++unit) {
      if (bytes[unit * kCodeUnitBytes] != opcodes_.cacheOpcode() ||
          bytes[unit * kCodeUnitBytes + 1] != 0)
        return llvm::createStringError(
            "inline cache entry at offset %zu of %s is not empty (specialized or corrupt code)",
            unit * kCodeUnitBytes, info->name.c_str());
    }
    startsAt_[instruction.startOffset / kCodeUnitBytes] =
        static_cast<int32_t>(code_.instructions.size());
    code_.instructions.push_back(instruction);
  }
  startsAt_[units] = static_cast<int32_t>(code_.instructions.size());
  return llvm::Error::success();
}

llvm::Error Decoder::resolveJumps() {
  size_t units = raw_.code.size() / kCodeUnitBytes;
  for (Instruction& instruction : code_.instructions) {
    const OpcodeInfo& info = *opcodes_.lookup(instruction.opcode);
    if (!info.isJump())
      continue;
    auto target = jumpTargetOffset(instruction, info);
    if (!target)
      return target.takeError();
    std::optional<uint32_t> index = instructionAt(*target / kCodeUnitBytes);
    if (*target % kCodeUnitBytes != 0 || *target / kCodeUnitBytes >= units || !index)
      return llvm::createStringError(
          "%s at offset %u jumps to offset %u, which is not the start of an instruction",
          info.name.c_str(), instruction.opcodeOffset(), *target);
    instruction.jumpTarget = static_cast<int32_t>(*index);
  }
  return llvm::Error::success();
}

llvm::Error Decoder::resolveExceptionTable() {
  auto entries = parseExceptionTable(raw_.exceptionTable);
  if (!entries)
    return entries.takeError();
  size_t units = raw_.code.size() / kCodeUnitBytes;
  for (auto [row, entry] : llvm::enumerate(*entries)) {
    std::optional<uint32_t> start = instructionAt(entry.start);
    std::optional<uint32_t> end = instructionAt(entry.end);
    std::optional<uint32_t> handler =
        entry.target < units ? instructionAt(entry.target) : std::nullopt;
    const char* problem = !start     ? "its start"
                          : !end     ? "its end"
                          : !handler ? "its handler"
                                     : nullptr;
    if (problem)
      return llvm::createStringError(
          "exception table row %zu (code units %u-%u -> %u): %s is not an instruction "
          "boundary in %zu code units",
          row, entry.start, entry.end, entry.target, problem, units);
    code_.exceptionRegions.push_back(
        ExceptionRegion{*start, *end, *handler, entry.depth, entry.pushLasti});
  }
  return llvm::Error::success();
}

class Encoder {
public:
  Encoder(const DecodedCode& code, const OpcodeTable& opcodes, const StackEffects& effects)
      : laidOut_(code), opcodes_(opcodes), effects_(effects) {}

  llvm::Expected<RawCode> run();

private:
  llvm::Error check() const;
  llvm::Error layOut();
  void emitCode(RawCode& raw) const;
  llvm::Expected<std::vector<RawExceptionEntry>> exceptionRows() const;
  uint32_t unitOf(uint32_t index) const {
    return index == laidOut_.instructions.size()
               ? totalUnits_
               : laidOut_.instructions[index].startOffset / kCodeUnitBytes;
  }

  DecodedCode laidOut_;
  const OpcodeTable& opcodes_;
  const StackEffects& effects_;
  uint32_t totalUnits_ = 0;
};

llvm::Error Encoder::check() const {
  const auto& instructions = laidOut_.instructions;
  for (auto [index, instruction] : llvm::enumerate(instructions)) {
    const OpcodeInfo* info = opcodes_.lookup(instruction.opcode);
    if (!info)
      return llvm::createStringError("instruction %zu has undefined opcode %u", index,
                                     instruction.opcode);
    if (instruction.opcode == opcodes_.extendedArg())
      return llvm::createStringError("instruction %zu is EXTENDED_ARG; arguments get their "
                                     "prefixes from the encoder",
                                     index);
    if (info->isJump() &&
        (instruction.jumpTarget < 0 || size_t(instruction.jumpTarget) >= instructions.size()))
      return llvm::createStringError("instruction %zu (%s) jumps to instruction %d, which does "
                                     "not exist",
                                     index, info->name.c_str(), instruction.jumpTarget);
  }
  for (auto [index, region] : llvm::enumerate(laidOut_.exceptionRegions))
    if (region.start > region.end || region.end > instructions.size() ||
        region.handler >= instructions.size())
      return llvm::createStringError(
          "exception region %zu [%u, %u) -> %u does not fit %zu instructions", index, region.start,
          region.end, region.handler, instructions.size());
  return llvm::Error::success();
}

/// Chooses each instruction's prefixes. Jump arguments depend on offsets,
/// which depend on prefixes, so this iterates from the smallest layout until
/// nothing grows, as CPython's assemble_jump_offsets does. Sizes only grow,
/// and each by at most three prefixes, so it stops.
llvm::Error Encoder::layOut() {
  auto& instructions = laidOut_.instructions;
  for (Instruction& instruction : instructions) {
    const OpcodeInfo& info = *opcodes_.lookup(instruction.opcode);
    instruction.cacheEntries = info.cacheEntries;
    instruction.extendedArgs = info.isJump() ? 0 : prefixesFor(instruction.arg);
  }
  for (size_t round = 0;; ++round) {
    uint64_t unit = 0;
    for (Instruction& instruction : instructions) {
      instruction.startOffset = static_cast<uint32_t>(unit * kCodeUnitBytes);
      unit += instruction.sizeInCodeUnits();
      if (unit * kCodeUnitBytes > UINT32_MAX)
        return llvm::createStringError("the code does not fit in 4 GiB");
    }
    totalUnits_ = static_cast<uint32_t>(unit);

    bool grew = false;
    for (Instruction& instruction : instructions) {
      const OpcodeInfo& info = *opcodes_.lookup(instruction.opcode);
      if (!info.isJump())
        continue;
      auto arg = jumpArgument(instruction, info, instructions[instruction.jumpTarget].startOffset);
      if (!arg)
        return arg.takeError();
      instruction.arg = *arg;
      uint8_t needed = prefixesFor(*arg);
      if (needed > instruction.extendedArgs) {
        instruction.extendedArgs = needed;
        grew = true;
      }
    }
    if (!grew)
      return llvm::Error::success();
    if (round > kMaxExtendedArgs * instructions.size())
      return llvm::createStringError("jump layout did not settle");
  }
}

void Encoder::emitCode(RawCode& raw) const {
  raw.code.reserve(size_t(totalUnits_) * kCodeUnitBytes);
  for (const Instruction& instruction : laidOut_.instructions) {
    for (unsigned prefix = instruction.extendedArgs; prefix > 0; --prefix) {
      raw.code.push_back(opcodes_.extendedArg());
      raw.code.push_back(static_cast<uint8_t>(instruction.arg >> (8 * prefix)));
    }
    raw.code.push_back(instruction.opcode);
    raw.code.push_back(static_cast<uint8_t>(instruction.arg));
    for (unsigned entry = 0; entry < instruction.cacheEntries; ++entry) {
      raw.code.push_back(opcodes_.cacheOpcode());
      raw.code.push_back(0);
    }
  }
}

/// The table rows for the regions, in their order. Empty regions protect
/// nothing and are left out (the compiler never writes one); rows must be
/// sorted and disjoint, since the interpreter's lookup relies on it.
llvm::Expected<std::vector<RawExceptionEntry>> Encoder::exceptionRows() const {
  std::vector<RawExceptionEntry> rows;
  for (const ExceptionRegion& region : laidOut_.exceptionRegions) {
    if (region.start == region.end)
      continue;
    RawExceptionEntry row{unitOf(region.start), unitOf(region.end), unitOf(region.handler),
                          region.depth, region.pushLasti};
    if (!rows.empty() && row.start < rows.back().end)
      return llvm::createStringError("exception region [%u, %u) overlaps or precedes the one "
                                     "before it",
                                     region.start, region.end);
    rows.push_back(row);
  }
  return rows;
}

llvm::Expected<RawCode> Encoder::run() {
  if (llvm::Error error = check())
    return error;
  if (llvm::Error error = layOut())
    return error;
  RawCode raw;
  raw.firstLine = laidOut_.firstLine;
  emitCode(raw);
  auto rows = exceptionRows();
  if (!rows)
    return rows.takeError();
  raw.exceptionTable = writeExceptionTable(*rows);
  auto lineTable = writeLineTable(laidOut_.instructions, laidOut_.firstLine);
  if (!lineTable)
    return lineTable.takeError();
  raw.lineTable = std::move(*lineTable);
  auto depth = computeMaxStackDepth(laidOut_, effects_, opcodes_);
  if (!depth)
    return depth.takeError();
  raw.stackSize = *depth;
  return raw;
}

} // namespace

llvm::Expected<DecodedCode> decode(const RawCode& raw, const OpcodeTable& opcodes) {
  return Decoder(raw, opcodes).run();
}

llvm::Expected<RawCode> encode(const DecodedCode& code, const OpcodeTable& opcodes,
                               const StackEffects& effects) {
  return Encoder(code, opcodes, effects).run();
}

} // namespace dync::bytecode
