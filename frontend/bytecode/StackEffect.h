//===- StackEffect.h - How each opcode moves the value stack ---------------===//
//
// The stack effect of every opcode is data: a table keyed by opcode name,
// checked against the interpreter's opcode map at start-up so that an opcode
// without an entry is an error, never a guess.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/bytecode/Instruction.h"
#include "frontend/bytecode/OpcodeTable.h"

#include "llvm/Support/Error.h"

#include <optional>

namespace dync::bytecode {

struct StackEffect {
  /// Values popped and pushed when execution falls through to the next
  /// instruction.
  int pops = 0;
  int pushes = 0;
  /// Net effect when the jump is taken, for jump opcodes.
  std::optional<int> jumpEffect;

  int fallthroughEffect() const { return pushes - pops; }
};

class StackEffects {
public:
  /// Binds the table to \p opcodes; fails naming any defined opcode the table
  /// does not cover.
  static llvm::Expected<StackEffects> create(const OpcodeTable& opcodes);

  llvm::Expected<StackEffect> effect(uint8_t opcode, uint32_t arg) const;

  /// Depth a handler starts at when \p region catches an exception: the
  /// region's depth, then `lasti` if requested, then the exception.
  static uint32_t handlerEntryDepth(const ExceptionRegion& region) {
    return region.depth + (region.pushLasti ? 1 : 0) + 1;
  }

private:
  const OpcodeTable* opcodes_ = nullptr;
  std::array<int16_t, 256> rowOf_{};
};

/// Maximum stack depth over every path from the entry, through jumps and
/// exception edges; an error if paths disagree or the stack underflows.
llvm::Expected<int> computeMaxStackDepth(const DecodedCode& code, const StackEffects& effects,
                                         const OpcodeTable& opcodes);

} // namespace dync::bytecode
