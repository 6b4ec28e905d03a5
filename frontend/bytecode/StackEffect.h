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

#include <array>
#include <optional>

namespace dync::bytecode {

/// One instruction's effect on the value stack, in the compiler's accounting
/// (the one `dis.stack_effect` reports and co_stacksize is computed with).
/// Where that accounting differs from what the interpreter does at run time
/// (PRECALL/CALL share out a call's net effect; RETURN_GENERATOR's resumption
/// value is counted at the entry instead), the net effect is the compiler's.
struct StackEffect {
  /// Values popped and pushed when execution falls through to the next
  /// instruction. `pops` is also the depth the instruction needs.
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

  /// The effect of \p opcode with argument \p arg; an error for an opcode the
  /// interpreter does not define or an argument that overflows the count.
  llvm::Expected<StackEffect> effect(uint8_t opcode, uint32_t arg) const;

  /// Whether execution never falls through to the next instruction after
  /// \p opcode: unconditional jumps, returns and raises.
  bool terminates(uint8_t opcode) const { return terminates_[opcode]; }

  /// Whether a body containing \p opcode is a generator-like body, which
  /// the compiler counts from depth 1 instead of 0: the frame is resumed
  /// after RETURN_GENERATOR with the sent value on the stack, and that
  /// value is not part of RETURN_GENERATOR's own stack effect.
  bool marksGeneratorBody(uint8_t opcode) const { return generatorMarker_[opcode]; }

  /// Depth a handler starts at when \p region catches an exception: the
  /// region's depth, then `lasti` if requested, then the exception.
  static uint32_t handlerEntryDepth(const ExceptionRegion& region) {
    return region.depth + (region.pushLasti ? 1 : 0) + 1;
  }

private:
  /// Index into the effect table for each opcode, -1 where undefined.
  std::array<int16_t, 256> rowOf_{};
  std::array<bool, 256> terminates_{};
  std::array<bool, 256> generatorMarker_{};
};

/// Maximum stack depth over every path from the entry, through jumps and
/// exception edges, counted the way CPython's compiler counts co_stacksize;
/// an error if paths disagree or the stack underflows.
llvm::Expected<int> computeMaxStackDepth(const DecodedCode& code, const StackEffects& effects,
                                         const OpcodeTable& opcodes);

} // namespace dync::bytecode
