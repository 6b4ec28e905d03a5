//===- OpcodeTable.h - CPython opcodes as read from the interpreter -------===//
//
// Opcode numbers, names, argument kinds and inline-cache sizes are read from
// the running interpreter's own `opcode` module, never retyped, so the toolkit
// follows the interpreter it is embedded in.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dync::bytecode {

/// How an opcode's argument is interpreted, from `opcode.has*` lists.
enum class ArgKind : uint8_t {
  None,    ///< opcode < HAVE_ARGUMENT: the argument byte is ignored
  Plain,   ///< a number with no table behind it (counts, flags)
  Const,   ///< index into co_consts
  Name,    ///< index into co_names
  Local,   ///< index into the fast locals
  Free,    ///< index into cells and free variables
  Compare, ///< index into opcode.cmp_op
  Jump,    ///< a jump; JumpDirection says how the argument is measured
};

/// How a jump's argument locates its target (dis's rules):
/// Forward/Backward are `hasjrel` (code units from the end of the opcode
/// word; backward if the name contains JUMP_BACKWARD), Absolute is `hasjabs`
/// (code units from the start of the code).
enum class JumpDirection : uint8_t { None, Forward, Backward, Absolute };

struct OpcodeInfo {
  std::string name;
  uint8_t code = 0;
  ArgKind argKind = ArgKind::None;
  JumpDirection jump = JumpDirection::None;
  /// Inline cache entries (code units) that follow the opcode word.
  uint8_t cacheEntries = 0;

  bool hasArgument() const { return argKind != ArgKind::None; }
  bool isJump() const { return jump != JumpDirection::None; }
};

class OpcodeTable {
public:
  /// Reads the tables from the embedded interpreter's `opcode` module. The
  /// interpreter must be initialized and the GIL held.
  static llvm::Expected<OpcodeTable> fromInterpreter();

  /// The opcode for \p code, or nullptr if the interpreter defines none.
  const OpcodeInfo* lookup(uint8_t code) const { return defined_[code] ? &infos_[code] : nullptr; }
  std::optional<uint8_t> byName(llvm::StringRef name) const;

  uint8_t extendedArg() const { return extendedArg_; }
  uint8_t cacheOpcode() const { return cache_; }
  /// opcode.cmp_op, for COMPARE_OP arguments.
  const std::vector<std::string>& compareOps() const { return compareOps_; }
  /// opcode._nb_ops symbols ("+", "+=", ...), for BINARY_OP arguments.
  const std::vector<std::string>& binaryOps() const { return binaryOps_; }

  /// Every defined opcode, in numeric order.
  std::vector<const OpcodeInfo*> all() const;

private:
  std::array<OpcodeInfo, 256> infos_{};
  std::array<bool, 256> defined_{};
  uint8_t extendedArg_ = 0;
  uint8_t cache_ = 0;
  std::vector<std::string> compareOps_;
  std::vector<std::string> binaryOps_;
};

} // namespace dync::bytecode
