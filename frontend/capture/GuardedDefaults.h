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

class Interpreter;
struct Value;

/// The defaults a call's binding used.
struct DefaultsRead {
  /// Indices into __defaults__.
  std::vector<size_t> positional;
  /// Names of keyword-only parameters filled from __kwdefaults__.
  std::vector<std::string> keywordOnly;
};

/// Guards what \p function's __defaults__ and __kwdefaults__ held where
/// \p read says the call used them, when the function was read through a
/// source (its length and each default used; a default that is neither a
/// constant nor a function keeps its type pinned). Nothing for functions
/// made while capturing.
void guardDefaultsRead(Interpreter& interp, const Value& function, const DefaultsRead& read);

} // namespace dync::capture
