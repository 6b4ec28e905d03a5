//===- GuardedDefaults.h - Guards on the defaults a call read ------------===//
//
// A function's __defaults__ and __kwdefaults__ can be replaced after
// export without changing its code; the values a call took from them are
// what the inlined code computed with. The binding records which defaults
// it used, and those are guarded where the function was read.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace dync::capture {

struct Value;

/// The defaults a call's binding used; ValueBuilder::guardDefaultsRead
/// guards them.
struct DefaultsRead {
  /// Indices into __defaults__.
  std::vector<size_t> positional;
  /// Names of keyword-only parameters filled from __kwdefaults__.
  std::vector<std::string> keywordOnly;
};

} // namespace dync::capture
