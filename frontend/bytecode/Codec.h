//===- Codec.h - Bytecode to instructions and back -------------------------===//
#pragma once

#include "frontend/bytecode/Instruction.h"
#include "frontend/bytecode/OpcodeTable.h"
#include "frontend/bytecode/RawCode.h"
#include "frontend/bytecode/StackEffect.h"

#include "llvm/Support/Error.h"

namespace dync::bytecode {

/// Decodes co_code, the exception table and the location table into
/// instructions with folded EXTENDED_ARGs, resolved jump targets and
/// positions, and exception regions over instruction indices.
llvm::Expected<DecodedCode> decode(const RawCode& raw, const OpcodeTable& opcodes);

/// Lays \p code out again (choosing the fewest EXTENDED_ARG prefixes that fit
/// each argument, recomputing jump arguments from targets), and writes the
/// three tables and the maximum stack depth.
llvm::Expected<RawCode> encode(const DecodedCode& code, const OpcodeTable& opcodes,
                               const StackEffects& effects);

} // namespace dync::bytecode
