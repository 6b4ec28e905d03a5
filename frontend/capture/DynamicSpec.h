//===- DynamicSpec.h - `--dynamic ARG[:DIM]=SYMBOL[LO,HI]` -----------------===//
#pragma once

#include "ir/Assumptions.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace dync::capture {

/// One dimension of one tensor argument declared dynamic:
/// `x:0=batch[1,1024]` makes `x.size(0)` the symbol `batch`, assumed in
/// [1, 1024]. The range is optional (`x:0=batch`), and either end may be
/// left open (`[2,]`, `[,512]`) or written `inf`. The same symbol on two
/// dimensions means they are equal.
///
/// `n=n[1,64]` (no dimension) makes the Python int argument `n` the symbol
/// `n`; a symbol shared with a tensor dimension means the int equals that
/// size.
struct DynamicSpec {
  std::string argument;
  unsigned dim = 0;
  /// Written without a dimension: the argument is an int, not a tensor.
  bool intArgument = false;
  std::string symbol;
  ir::SymbolRange range;
  /// As written, for messages.
  std::string text;
};

/// Parses one `--dynamic` value; errors say what is malformed.
llvm::Expected<DynamicSpec> parseDynamicSpec(llvm::StringRef text);

/// Checks that \p specs agree with each other: a symbol has one range
/// (every declaration of it writes the same one), and a dimension is
/// declared once.
llvm::Error checkDynamicSpecs(llvm::ArrayRef<DynamicSpec> specs);

} // namespace dync::capture
