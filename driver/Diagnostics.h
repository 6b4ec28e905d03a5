//===- Diagnostics.h - Rendering errors the way a compiler does -----------===//
#pragma once

#include "compiler/UsageError.h"

#include "llvm/Support/Error.h"

#include <string>

namespace dync::driver {

/// How dync exits.
enum ExitCode : int {
  ExitSuccess = 0,
  /// The input is wrong: a missing file, a syntax error, an exception while
  /// importing, an entry that is not a function, an unusable interpreter.
  ExitUserError = 1,
  /// The command line is wrong: unknown options, a malformed entry spec.
  ExitUsageError = 2,
};

/// A command line that cannot be acted on; exits with ExitUsageError.
using compiler::UsageError;

/// Re-labels every error in \p error as a usage error.
llvm::Error asUsageError(llvm::Error error);

/// Prints each error in \p error to stderr ("dync: error: ...", or
/// "file:line:col: error: ..." with the source line and a caret; Python
/// tracebacks below their headline), colored only when stderr is a terminal.
/// Returns the exit code they call for.
int reportError(llvm::Error error);

} // namespace dync::driver
