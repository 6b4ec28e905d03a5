//===- StackDepth.cpp - co_stacksize from the instructions ----------------===//
//
// The compiler computes co_stacksize on its control-flow graph before the
// SETUP_* pseudo-instructions become the exception table: every block is
// reached from the entry by falling through, by a jump, or through a SETUP_*
// to its handler, and the deepest point on any of those paths (handler entry
// depths included) is the answer. Here the same walk runs on the final
// instructions, with an edge from every protected instruction to its
// handler.
//
// One difference remains: when the optimizer empties a protected range, its
// row disappears from the exception table but its handler stays in the code
// (the compiler reached it through the SETUP_*), unreachable for us. Such
// code is walked from the smallest depth consistent with it: no underflow,
// no protected instruction below its handler's depth, and agreement with any
// reachable code it flows into. That is the depth the compiler gave it.
//
//===----------------------------------------------------------------------===//
#include "frontend/bytecode/StackEffect.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <string>
#include <vector>

namespace dync::bytecode {

namespace {

/// Depths above this are not tried for unreachable code.
constexpr int kMaxUnreachableEntryDepth = 1024;

class DepthWalk {
public:
  DepthWalk(const DecodedCode& code, const OpcodeTable& opcodes, const StackEffects& effects)
      : code_(code), opcodes_(opcodes), effects_(effects) {}

  llvm::Expected<int> run();

private:
  llvm::Error prepare();
  /// Walks everything reachable from \p start entered at \p depth. On
  /// failure returns the reason and leaves the depths as they were.
  std::optional<std::string> walkFrom(size_t start, int depth);
  std::optional<std::string> reach(size_t index, int depth);
  std::string where(size_t index) const;

  const DecodedCode& code_;
  const OpcodeTable& opcodes_;
  const StackEffects& effects_;

  std::vector<StackEffect> effectOf_;
  /// The exception region protecting each instruction, or -1.
  std::vector<int> regionOf_;
  std::vector<int> depth_;
  std::vector<size_t> touched_;
  std::vector<size_t> pending_;
  int maxDepth_ = 0;
};

std::string DepthWalk::where(size_t index) const {
  const Instruction& instruction = code_.instructions[index];
  const OpcodeInfo* info = opcodes_.lookup(instruction.opcode);
  return llvm::formatv("instruction {0} ({1} at offset {2})", index,
                       info ? info->name : std::to_string(instruction.opcode),
                       instruction.opcodeOffset());
}

llvm::Error DepthWalk::prepare() {
  const auto& instructions = code_.instructions;
  size_t count = instructions.size();
  effectOf_.reserve(count);
  for (auto [index, instruction] : llvm::enumerate(instructions)) {
    const OpcodeInfo* info = opcodes_.lookup(instruction.opcode);
    if (!info)
      return llvm::createStringError("instruction %zu has undefined opcode %u", index,
                                     instruction.opcode);
    auto effect = effects_.effect(instruction.opcode, instruction.arg);
    if (!effect)
      return effect.takeError();
    if (info->isJump() &&
        (instruction.jumpTarget < 0 || static_cast<size_t>(instruction.jumpTarget) >= count))
      return llvm::createStringError("%s jumps to instruction %d, which does not exist",
                                     where(index).c_str(), instruction.jumpTarget);
    effectOf_.push_back(*effect);
  }

  regionOf_.assign(count, -1);
  for (auto [index, region] : llvm::enumerate(code_.exceptionRegions)) {
    if (region.start > region.end || region.end > count || region.handler >= count)
      return llvm::createStringError(
          "exception region %zu [%u, %u) -> %u does not fit %zu instructions", index, region.start,
          region.end, region.handler, count);
    // The interpreter takes the first matching row, so a later overlapping
    // row does not protect what an earlier one already does.
    for (uint32_t protectedIndex = region.start; protectedIndex < region.end; ++protectedIndex)
      if (regionOf_[protectedIndex] < 0)
        regionOf_[protectedIndex] = static_cast<int>(index);
  }
  depth_.assign(count, -1);
  return llvm::Error::success();
}

std::optional<std::string> DepthWalk::reach(size_t index, int depth) {
  maxDepth_ = std::max(maxDepth_, depth);
  if (depth_[index] == depth)
    return std::nullopt;
  if (depth_[index] >= 0)
    return llvm::formatv("{0} is reached with stack depths {1} and {2}", where(index),
                         depth_[index], depth)
        .str();
  depth_[index] = depth;
  touched_.push_back(index);
  pending_.push_back(index);
  return std::nullopt;
}

std::optional<std::string> DepthWalk::walkFrom(size_t start, int depth) {
  touched_.clear();
  pending_.clear();
  int savedMax = maxDepth_;
  auto fail = [&](std::string reason) -> std::optional<std::string> {
    for (size_t index : touched_)
      depth_[index] = -1;
    maxDepth_ = savedMax;
    return reason;
  };

  if (auto failure = reach(start, depth))
    return fail(std::move(*failure));
  const auto& instructions = code_.instructions;
  while (!pending_.empty()) {
    size_t index = pending_.back();
    pending_.pop_back();
    int before = depth_[index];
    const Instruction& instruction = instructions[index];

    if (int regionIndex = regionOf_[index]; regionIndex >= 0) {
      const ExceptionRegion& region = code_.exceptionRegions[regionIndex];
      if (before < static_cast<int>(region.depth))
        return fail(llvm::formatv("{0} has stack depth {1}, below its handler's depth {2}",
                                  where(index), before, region.depth));
      if (auto failure =
              reach(region.handler, static_cast<int>(StackEffects::handlerEntryDepth(region))))
        return fail(std::move(*failure));
    }

    const StackEffect& effect = effectOf_[index];
    if (before < effect.pops)
      return fail(llvm::formatv("{0} pops {1} values from a stack of depth {2}", where(index),
                                effect.pops, before));
    if (effect.jumpEffect) {
      int taken = before + *effect.jumpEffect;
      if (taken < 0)
        return fail(llvm::formatv("{0} underflows the stack when it jumps", where(index)));
      if (auto failure = reach(static_cast<size_t>(instruction.jumpTarget), taken))
        return fail(std::move(*failure));
    }
    if (effects_.terminates(instruction.opcode))
      continue;
    if (index + 1 == instructions.size())
      return fail(llvm::formatv("execution falls off the end of the code after {0}", where(index)));
    if (auto failure = reach(index + 1, before + effect.fallthroughEffect()))
      return fail(std::move(*failure));
  }
  return std::nullopt;
}

llvm::Expected<int> DepthWalk::run() {
  if (llvm::Error error = prepare())
    return error;
  const auto& instructions = code_.instructions;
  if (instructions.empty())
    return 0;

  bool generatorBody = llvm::any_of(instructions, [&](const Instruction& instruction) {
    return effects_.marksGeneratorBody(instruction.opcode);
  });
  if (auto failure = walkFrom(0, generatorBody ? 1 : 0))
    return llvm::createStringError("stack depth: %s", failure->c_str());

  for (size_t index = 0; index < instructions.size(); ++index) {
    if (depth_[index] >= 0)
      continue;
    std::string lastFailure;
    bool placed = false;
    for (int entry = 0; entry <= kMaxUnreachableEntryDepth && !placed; ++entry) {
      std::optional<std::string> failure = walkFrom(index, entry);
      placed = !failure;
      if (failure)
        lastFailure = std::move(*failure);
    }
    if (!placed)
      return llvm::createStringError("stack depth: no entry depth fits unreachable code at %s: %s",
                                     where(index).c_str(), lastFailure.c_str());
  }
  return maxDepth_;
}

} // namespace

llvm::Expected<int> computeMaxStackDepth(const DecodedCode& code, const StackEffects& effects,
                                         const OpcodeTable& opcodes) {
  return DepthWalk(code, opcodes, effects).run();
}

} // namespace dync::bytecode
