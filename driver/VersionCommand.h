//===- VersionCommand.h - `dync --version` --------------------------------===//
#pragma once

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace dync::python {
class EmbeddedPython;
} // namespace dync::python

namespace dync::driver {

/// dync's version and the LLVM, torch and Python versions it was built
/// against. With \p verbose, also starts the interpreter the user's code
/// would run in and reports it.
llvm::Error printVersion(llvm::raw_ostream& os, bool verbose);

/// The running embedded interpreter: executable, version and how it was
/// chosen, the linked libpython's version, sys.prefix, sys.base_prefix and
/// sys.path; one "<linePrefix>key: value" line each.
void printRunningInterpreter(llvm::raw_ostream& os, const python::EmbeddedPython& python,
                             llvm::StringRef linePrefix);

} // namespace dync::driver
