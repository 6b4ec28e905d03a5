//===- LineTable.h - co_linetable (PEP 626/657 locations) ------------------===//
#pragma once

#include "frontend/bytecode/Instruction.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace dync::bytecode {

/// The position of every code unit of a body of \p codeUnits units; an error
/// if the table is malformed or does not cover exactly that many units.
llvm::Expected<std::vector<SourcePosition>> parseLineTable(llvm::ArrayRef<uint8_t> bytes,
                                                           int firstLine, size_t codeUnits);

/// Encodes the positions of \p instructions (laid out, sizes final) the way
/// CPython 3.11's assembler does: one or more entries per instruction, each
/// covering at most 8 code units, in the form that assembler picks. An error
/// for a position no form can hold (a column below -1, an end line before the
/// start line).
llvm::Expected<std::vector<uint8_t>> writeLineTable(llvm::ArrayRef<Instruction> instructions,
                                                    int firstLine);

} // namespace dync::bytecode
