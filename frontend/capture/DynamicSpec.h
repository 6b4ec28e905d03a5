//===- DynamicSpec.h - `--dynamic ARG[:DIM]=SYMBOL[LO,HI]` -----------------===//
#pragma once

#include "ir/Assumptions.h"
#include "ir/Source.h"

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
///
/// `cfg.n=n[1,64]`, `dims[1]=n`, `opts['n']=n`: an int held in an object's
/// attribute or a container's item, reached from argument `cfg` (`dims`,
/// `opts`) by the reads written after it, is the symbol `n` wherever the
/// program reads it from there.
struct DynamicSpec {
  std::string argument;
  unsigned dim = 0;
  /// Written without a dimension: the argument is an int, not a tensor.
  bool intArgument = false;
  /// For an int inside the argument: the reads after the argument's name
  /// (`.n`, `[1]`, `['n']`), as written; empty for the argument itself.
  std::string path;
  std::string symbol;
  ir::SymbolRange range;
  /// As written, for messages.
  std::string text;
};

/// Parses one `--dynamic` value; errors say what is malformed.
llvm::Expected<DynamicSpec> parseDynamicSpec(llvm::StringRef text);

/// The source of what \p spec names, given its argument's source
/// \p argument: the argument itself, or the attribute and item reads of
/// its path applied to it.
ir::SourcePtr sourceOf(const DynamicSpec& spec, const ir::SourcePtr& argument);

/// Checks that \p specs agree with each other: a symbol has one range
/// (every declaration of it writes the same one), and a dimension is
/// declared once.
llvm::Error checkDynamicSpecs(llvm::ArrayRef<DynamicSpec> specs);

} // namespace dync::capture
