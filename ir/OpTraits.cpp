//===- OpTraits.cpp - Look up torch's facts about an overload -------------===//
//
// The table itself is generated from the installed torch at build time
// (gen-op-traits.py writes OpTraits.inc, sorted by name); this file only
// searches it, and adds dync's own operators on the default generator's
// state (runtime/shim/GeneratorOps.cpp), which torch does not register.
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

/// dync's operators on the default CPU generator (`torch.manual_seed`,
/// `get_rng_state`, `set_rng_state` in a graph), as their schemas and tags
/// say: tagged nondeterministic_seeded, writing no tensor argument and
/// returning no alias, sorted by name.
constexpr OpTraitsEntry generatorTable[] = {
    {"dync::get_rng_state.default", {.randomSeeded = true}},
    {"dync::manual_seed.default", {.randomSeeded = true}},
    {"dync::set_rng_state.default", {.randomSeeded = true}},
};

} // namespace

const OpTraits* findOpTraits(llvm::StringRef overload) {
  if (overload.starts_with("dync::")) {
    for (const OpTraitsEntry& entry : generatorTable)
      if (entry.name == overload)
        return &entry.traits;
    return nullptr;
  }
  const OpTraitsEntry* end = std::end(opTraitsTable);
  const OpTraitsEntry* it = llvm::partition_point(
      opTraitsTable, [&](const OpTraitsEntry& entry) { return entry.name < overload; });
  if (it == end || it->name != overload)
    return nullptr;
  return &it->traits;
}

} // namespace dync::ir
