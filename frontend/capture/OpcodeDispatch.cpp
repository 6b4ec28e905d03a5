//===- OpcodeDispatch.cpp - Every opcode: a handler or a reason -----------===//
//
// The interpreter is total over the opcode set: this table has one row per
// opcode name CPython 3.11 defines, either the handler that executes it or
// the reason capture stops there. BytecodeMachine::bindOpcodes checks it
// against the running interpreter's opcode map, both ways.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/BytecodeMachine.h"

#include "llvm/ADT/StringMap.h"

namespace dync::capture {

namespace {

const OpcodeEntry Entries[] = {
#define DYNC_OPCODE(NAME) {#NAME, &BytecodeMachine::op_##NAME, nullptr},
#include "frontend/capture/Opcodes.def"
    // Never executed: the decoder folds them away.
    {"CACHE", nullptr, "an inline cache entry is not an instruction"},
    {"EXTENDED_ARG", nullptr, "EXTENDED_ARG prefixes are folded into the next instruction"},
    // Module bodies, not function or class bodies.
    {"IMPORT_STAR", nullptr, "'from ... import *'"},
    {"PRINT_EXPR", nullptr, "printing an interactive expression"},
    // Side effects on state outside the graph.
    {"DELETE_GLOBAL", nullptr, "deleting a global variable (a side effect outside the graph)"},
    {"DELETE_ATTR", nullptr, "deleting an attribute (a side effect outside the graph)"},
    // Exception groups.
    {"CHECK_EG_MATCH", nullptr, "exception groups ('except*')"},
    {"PREP_RERAISE_STAR", nullptr, "exception groups ('except*')"},
    // Structural pattern matching.
    {"MATCH_CLASS", nullptr, "'match' statements"},
    {"MATCH_KEYS", nullptr, "'match' statements"},
    {"MATCH_MAPPING", nullptr, "'match' statements"},
    {"MATCH_SEQUENCE", nullptr, "'match' statements"},
    // Coroutines and async generators.
    {"ASYNC_GEN_WRAP", nullptr, "async generators"},
    {"BEFORE_ASYNC_WITH", nullptr, "'async with'"},
    {"END_ASYNC_FOR", nullptr, "'async for'"},
    {"GET_AITER", nullptr, "'async for'"},
    {"GET_ANEXT", nullptr, "'async for'"},
    {"GET_AWAITABLE", nullptr, "'await'"},
};

} // namespace

llvm::ArrayRef<OpcodeEntry> opcodeEntries() { return Entries; }

llvm::Error BytecodeMachine::bindOpcodes() {
  llvm::StringMap<const OpcodeEntry*> byName;
  for (const OpcodeEntry& entry : opcodeEntries())
    if (!byName.try_emplace(entry.name, &entry).second)
      return llvm::createStringError("opcode %s has two rows in the capture opcode table",
                                     entry.name);
  std::vector<std::string> missing;
  llvm::StringMap<bool> defined;
  for (const bytecode::OpcodeInfo* info : opcodes_.all()) {
    defined[info->name] = true;
    auto it = byName.find(info->name);
    if (it == byName.end()) {
      missing.push_back(info->name);
      continue;
    }
    dispatch_[info->code] = it->second;
  }
  if (!missing.empty()) {
    std::string names;
    for (const std::string& name : missing)
      names += (names.empty() ? "" : ", ") + name;
    return llvm::createStringError(
        "the interpreter defines opcodes the capture opcode table has no row for: %s",
        names.c_str());
  }
  for (const OpcodeEntry& entry : opcodeEntries())
    if (!defined.count(entry.name))
      return llvm::createStringError(
          "the capture opcode table has a row for %s, which the interpreter does not define",
          entry.name);
  return llvm::Error::success();
}

} // namespace dync::capture
