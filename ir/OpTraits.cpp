//===- OpTraits.cpp - Look up torch's facts about an overload -------------===//
//
// The table itself is generated from the installed torch at build time
// (gen-op-traits.py writes OpTraits.inc, sorted by name); this file only
// searches it.
//
//===----------------------------------------------------------------------===//
#include "ir/OpTraits.h"

#include "llvm/ADT/STLExtras.h"

#include <iterator>

namespace dync::ir {

namespace {

struct OpTraitsEntry {
  llvm::StringLiteral name;
  OpTraits traits;
};

constexpr OpTraitsEntry opTraitsTable[] = {
#include "OpTraits.inc"
};

} // namespace

const OpTraits* findOpTraits(llvm::StringRef overload) {
  const OpTraitsEntry* end = std::end(opTraitsTable);
  const OpTraitsEntry* it = llvm::partition_point(
      opTraitsTable, [&](const OpTraitsEntry& entry) { return entry.name < overload; });
  if (it == end || it->name != overload)
    return nullptr;
  return &it->traits;
}

} // namespace dync::ir
