//===- StackEffect.cpp - The stack effect of every CPython 3.11 opcode ----===//
//
// One row per opcode name: how many values it pops and pushes as a function
// of its argument, and for jumps what it leaves when the jump is taken. The
// net effects are the compiler's (`stack_effect` in Python/compile.c, which
// `dis.stack_effect` exposes); the split into pops and pushes follows the
// interpreter as far as that net allows, so `pops` is a depth the
// instruction needs (the few that also read a value further down which they
// keep, like LIST_APPEND, do not count it).
//
//===----------------------------------------------------------------------===//
#include "frontend/bytecode/StackEffect.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <bit>
#include <limits>

namespace dync::bytecode {

namespace {

/// A count of values as a function of the instruction's argument.
using Count = int64_t (*)(int64_t arg);

template <int N> constexpr int64_t fixed(int64_t) { return N; }
/// The argument plus N: BUILD_TUPLE pops `arg`, BUILD_CONST_KEY_MAP `arg + 1`.
template <int N> constexpr int64_t argPlus(int64_t arg) { return arg + N; }

constexpr int64_t keyValuePairs(int64_t arg) { return 2 * arg; }
/// LOAD_GLOBAL pushes a NULL first when the low bit is set.
constexpr int64_t globalAndNull(int64_t arg) { return 1 + (arg & 1); }
/// UNPACK_EX: targets before the star (low byte), the starred list, targets
/// after it (the higher bits).
constexpr int64_t starUnpackTargets(int64_t arg) { return (arg & 0xFF) + 1 + (arg >> 8); }
/// MAKE_FUNCTION: the code object plus one value per flag among defaults,
/// keyword defaults, annotations and closure.
constexpr int64_t functionParts(int64_t arg) {
  return 1 + std::popcount(static_cast<uint64_t>(arg & 0xF));
}
/// BUILD_SLICE takes a step only when its argument is 3.
constexpr int64_t sliceParts(int64_t arg) { return arg == 3 ? 3 : 2; }
/// FORMAT_VALUE also pops a format spec when bit 2 is set.
constexpr int64_t formatParts(int64_t arg) { return (arg & 0x04) ? 2 : 1; }
/// CALL_FUNCTION_EX: NULL, callable, positional tuple, and a mapping when the
/// low bit is set.
constexpr int64_t callExParts(int64_t arg) { return 3 + (arg & 1); }

struct Row {
  llvm::StringLiteral name;
  Count pops;
  Count pushes;
  /// For jumps: pops and pushes when the jump is taken.
  Count jumpPops = nullptr;
  Count jumpPushes = nullptr;
};

constexpr Row kRows[] = {
    // Inline cache entries are never executed.
    {"CACHE", fixed<0>, fixed<0>},
    {"NOP", fixed<0>, fixed<0>},
    {"RESUME", fixed<0>, fixed<0>},
    {"EXTENDED_ARG", fixed<0>, fixed<0>},
    {"MAKE_CELL", fixed<0>, fixed<0>},
    {"COPY_FREE_VARS", fixed<0>, fixed<0>},
    {"KW_NAMES", fixed<0>, fixed<0>},
    {"SETUP_ANNOTATIONS", fixed<0>, fixed<0>},
    // The sent value the frame resumes with is counted by starting generator
    // bodies at depth 1 (see marksGeneratorBody), not here.
    {"RETURN_GENERATOR", fixed<0>, fixed<0>},

    // Stack manipulation. COPY and SWAP take the top `arg` values and put
    // them back (with a copy, or two exchanged).
    {"POP_TOP", fixed<1>, fixed<0>},
    {"PUSH_NULL", fixed<0>, fixed<1>},
    {"COPY", argPlus<0>, argPlus<1>},
    {"SWAP", argPlus<0>, argPlus<0>},

    // Loads, stores and deletes.
    {"LOAD_CONST", fixed<0>, fixed<1>},
    {"LOAD_NAME", fixed<0>, fixed<1>},
    {"STORE_NAME", fixed<1>, fixed<0>},
    {"DELETE_NAME", fixed<0>, fixed<0>},
    {"LOAD_GLOBAL", fixed<0>, globalAndNull},
    {"STORE_GLOBAL", fixed<1>, fixed<0>},
    {"DELETE_GLOBAL", fixed<0>, fixed<0>},
    {"LOAD_FAST", fixed<0>, fixed<1>},
    {"STORE_FAST", fixed<1>, fixed<0>},
    {"DELETE_FAST", fixed<0>, fixed<0>},
    {"LOAD_CLOSURE", fixed<0>, fixed<1>},
    {"LOAD_DEREF", fixed<0>, fixed<1>},
    {"LOAD_CLASSDEREF", fixed<0>, fixed<1>},
    {"STORE_DEREF", fixed<1>, fixed<0>},
    {"DELETE_DEREF", fixed<0>, fixed<0>},
    {"LOAD_ATTR", fixed<1>, fixed<1>},
    {"STORE_ATTR", fixed<2>, fixed<0>},
    {"DELETE_ATTR", fixed<1>, fixed<0>},
    {"LOAD_METHOD", fixed<1>, fixed<2>},
    {"BINARY_SUBSCR", fixed<2>, fixed<1>},
    {"STORE_SUBSCR", fixed<3>, fixed<0>},
    {"DELETE_SUBSCR", fixed<2>, fixed<0>},
    {"LOAD_BUILD_CLASS", fixed<0>, fixed<1>},
    {"LOAD_ASSERTION_ERROR", fixed<0>, fixed<1>},
    {"IMPORT_NAME", fixed<2>, fixed<1>},
    {"IMPORT_FROM", fixed<1>, fixed<2>},
    {"IMPORT_STAR", fixed<1>, fixed<0>},

    // Operators.
    {"UNARY_POSITIVE", fixed<1>, fixed<1>},
    {"UNARY_NEGATIVE", fixed<1>, fixed<1>},
    {"UNARY_NOT", fixed<1>, fixed<1>},
    {"UNARY_INVERT", fixed<1>, fixed<1>},
    {"BINARY_OP", fixed<2>, fixed<1>},
    {"COMPARE_OP", fixed<2>, fixed<1>},
    {"IS_OP", fixed<2>, fixed<1>},
    {"CONTAINS_OP", fixed<2>, fixed<1>},
    {"FORMAT_VALUE", formatParts, fixed<1>},

    // Building containers and strings. The *_ADD, *_EXTEND, *_UPDATE and
    // *_MERGE forms also read a container further down, which stays.
    {"BUILD_TUPLE", argPlus<0>, fixed<1>},
    {"BUILD_LIST", argPlus<0>, fixed<1>},
    {"BUILD_SET", argPlus<0>, fixed<1>},
    {"BUILD_MAP", keyValuePairs, fixed<1>},
    {"BUILD_CONST_KEY_MAP", argPlus<1>, fixed<1>},
    {"BUILD_STRING", argPlus<0>, fixed<1>},
    {"BUILD_SLICE", sliceParts, fixed<1>},
    {"LIST_TO_TUPLE", fixed<1>, fixed<1>},
    {"LIST_APPEND", fixed<1>, fixed<0>},
    {"SET_ADD", fixed<1>, fixed<0>},
    {"MAP_ADD", fixed<2>, fixed<0>},
    {"LIST_EXTEND", fixed<1>, fixed<0>},
    {"SET_UPDATE", fixed<1>, fixed<0>},
    {"DICT_UPDATE", fixed<1>, fixed<0>},
    {"DICT_MERGE", fixed<1>, fixed<0>},
    {"UNPACK_SEQUENCE", fixed<1>, argPlus<0>},
    {"UNPACK_EX", fixed<1>, starUnpackTargets},

    // Calls. The compiler charges PRECALL for the arguments and CALL for the
    // callable and its NULL-or-self slot, returning the result.
    {"PRECALL", argPlus<0>, fixed<0>},
    {"CALL", fixed<2>, fixed<1>},
    {"CALL_FUNCTION_EX", callExParts, fixed<1>},
    {"MAKE_FUNCTION", functionParts, fixed<1>},
    {"RETURN_VALUE", fixed<1>, fixed<0>},
    {"PRINT_EXPR", fixed<1>, fixed<0>},

    // Iteration, generators and coroutines.
    {"GET_ITER", fixed<1>, fixed<1>},
    {"GET_YIELD_FROM_ITER", fixed<1>, fixed<1>},
    {"FOR_ITER", fixed<1>, fixed<2>, fixed<1>, fixed<0>},
    {"YIELD_VALUE", fixed<1>, fixed<1>},
    {"ASYNC_GEN_WRAP", fixed<1>, fixed<1>},
    {"GET_AWAITABLE", fixed<1>, fixed<1>},
    {"GET_AITER", fixed<1>, fixed<1>},
    {"GET_ANEXT", fixed<1>, fixed<2>},
    {"SEND", fixed<2>, fixed<2>, fixed<2>, fixed<1>},
    {"END_ASYNC_FOR", fixed<2>, fixed<0>},
    {"BEFORE_WITH", fixed<1>, fixed<2>},
    {"BEFORE_ASYNC_WITH", fixed<1>, fixed<2>},

    // Exceptions.
    {"PUSH_EXC_INFO", fixed<1>, fixed<2>},
    {"POP_EXCEPT", fixed<1>, fixed<0>},
    {"CHECK_EXC_MATCH", fixed<2>, fixed<2>},
    {"CHECK_EG_MATCH", fixed<2>, fixed<2>},
    {"PREP_RERAISE_STAR", fixed<2>, fixed<1>},
    // With a nonzero argument RERAISE also reads lasti below the exception,
    // and leaves it.
    {"RERAISE", fixed<1>, fixed<0>},
    {"RAISE_VARARGS", argPlus<0>, fixed<0>},
    // exit function, lasti, previous exception, exception -> same + result.
    {"WITH_EXCEPT_START", fixed<4>, fixed<5>},

    // Pattern matching.
    {"GET_LEN", fixed<1>, fixed<2>},
    {"MATCH_MAPPING", fixed<1>, fixed<2>},
    {"MATCH_SEQUENCE", fixed<1>, fixed<2>},
    {"MATCH_KEYS", fixed<2>, fixed<3>},
    {"MATCH_CLASS", fixed<3>, fixed<1>},

    // Jumps.
    {"JUMP_FORWARD", fixed<0>, fixed<0>, fixed<0>, fixed<0>},
    {"JUMP_BACKWARD", fixed<0>, fixed<0>, fixed<0>, fixed<0>},
    {"JUMP_BACKWARD_NO_INTERRUPT", fixed<0>, fixed<0>, fixed<0>, fixed<0>},
    {"JUMP_IF_FALSE_OR_POP", fixed<1>, fixed<0>, fixed<1>, fixed<1>},
    {"JUMP_IF_TRUE_OR_POP", fixed<1>, fixed<0>, fixed<1>, fixed<1>},
    {"POP_JUMP_FORWARD_IF_FALSE", fixed<1>, fixed<0>, fixed<1>, fixed<0>},
    {"POP_JUMP_FORWARD_IF_TRUE", fixed<1>, fixed<0>, fixed<1>, fixed<0>},
    {"POP_JUMP_FORWARD_IF_NONE", fixed<1>, fixed<0>, fixed<1>, fixed<0>},
    {"POP_JUMP_FORWARD_IF_NOT_NONE", fixed<1>, fixed<0>, fixed<1>, fixed<0>},
    {"POP_JUMP_BACKWARD_IF_FALSE", fixed<1>, fixed<0>, fixed<1>, fixed<0>},
    {"POP_JUMP_BACKWARD_IF_TRUE", fixed<1>, fixed<0>, fixed<1>, fixed<0>},
    {"POP_JUMP_BACKWARD_IF_NONE", fixed<1>, fixed<0>, fixed<1>, fixed<0>},
    {"POP_JUMP_BACKWARD_IF_NOT_NONE", fixed<1>, fixed<0>, fixed<1>, fixed<0>},
};

/// Opcodes after which execution does not continue with the next
/// instruction (the compiler's stackdepth() stops a path at them).
constexpr llvm::StringLiteral kTerminators[] = {
    "RETURN_VALUE", "RAISE_VARARGS", "RERAISE",
    "JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT",
};

/// Opcodes the compiler puts only at the start of generator, coroutine and
/// async generator bodies, whose depth count starts at 1.
constexpr llvm::StringLiteral kGeneratorMarkers[] = {"RETURN_GENERATOR"};

llvm::Expected<int> toCount(int64_t value, const Row& row, uint32_t arg) {
  if (value < 0 || value > std::numeric_limits<int>::max())
    return llvm::createStringError("stack effect of %s with argument %u is out of range",
                                   row.name.data(), arg);
  return static_cast<int>(value);
}

} // namespace

llvm::Expected<StackEffects> StackEffects::create(const OpcodeTable& opcodes) {
  StackEffects effects;
  effects.rowOf_.fill(-1);
  for (auto [index, row] : llvm::enumerate(kRows)) {
    std::optional<uint8_t> code = opcodes.byName(row.name);
    if (!code)
      return llvm::createStringError("the stack effect table has a row for %s, which the "
                                     "interpreter does not define",
                                     row.name.data());
    if (effects.rowOf_[*code] != -1)
      return llvm::createStringError("the stack effect table has two rows for %s", row.name.data());
    const OpcodeInfo* info = opcodes.lookup(*code);
    if (info->isJump() != (row.jumpPops != nullptr))
      return llvm::createStringError("%s is %sa jump for the interpreter but %sfor the stack "
                                     "effect table",
                                     row.name.data(), info->isJump() ? "" : "not ",
                                     info->isJump() ? "not " : "");
    effects.rowOf_[*code] = static_cast<int16_t>(index);
  }
  for (const OpcodeInfo* info : opcodes.all())
    if (effects.rowOf_[info->code] == -1)
      return llvm::createStringError("the stack effect table has no row for opcode %s (%u)",
                                     info->name.c_str(), info->code);

  auto markAll = [&](llvm::ArrayRef<llvm::StringLiteral> names, std::array<bool, 256>& set,
                     const char* what) -> llvm::Error {
    for (llvm::StringLiteral name : names) {
      std::optional<uint8_t> code = opcodes.byName(name);
      if (!code)
        return llvm::createStringError("%s %s is not defined by the interpreter", what,
                                       name.data());
      set[*code] = true;
    }
    return llvm::Error::success();
  };
  if (llvm::Error error = markAll(kTerminators, effects.terminates_, "terminator"))
    return error;
  if (llvm::Error error = markAll(kGeneratorMarkers, effects.generatorMarker_, "generator marker"))
    return error;
  return effects;
}

llvm::Expected<StackEffect> StackEffects::effect(uint8_t opcode, uint32_t arg) const {
  if (rowOf_[opcode] < 0)
    return llvm::createStringError("opcode %u is not defined by the interpreter", opcode);
  const Row& row = kRows[rowOf_[opcode]];
  StackEffect result;
  auto pops = toCount(row.pops(arg), row, arg);
  if (!pops)
    return pops.takeError();
  auto pushes = toCount(row.pushes(arg), row, arg);
  if (!pushes)
    return pushes.takeError();
  result.pops = *pops;
  result.pushes = *pushes;
  if (row.jumpPops) {
    auto jumpPops = toCount(row.jumpPops(arg), row, arg);
    if (!jumpPops)
      return jumpPops.takeError();
    auto jumpPushes = toCount(row.jumpPushes(arg), row, arg);
    if (!jumpPushes)
      return jumpPushes.takeError();
    result.jumpEffect = *jumpPushes - *jumpPops;
  }
  return result;
}

} // namespace dync::bytecode
