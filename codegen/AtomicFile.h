//===- AtomicFile.h - Files that appear complete or not at all -*- C++ -*-===//
//
// Artifacts and cache entries are written under a temporary name in the
// destination's directory and renamed into place, so a failure or a
// concurrent reader never sees a partial file under the real name.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace dync::codegen {

/// Runs \p write on a fresh temporary file next to \p path, then renames it
/// to \p path; on any failure the temporary is removed.
llvm::Error writeAtomically(llvm::StringRef path,
                            llvm::function_ref<llvm::Error(llvm::StringRef temp)> write);

/// writeAtomically() of \p bytes.
llvm::Error writeFileAtomically(llvm::StringRef path, llvm::StringRef bytes);

} // namespace dync::codegen
