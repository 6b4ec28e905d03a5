//===- SamePath.h - Whether two spellings name one file -------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"

namespace dync::python {

/// Whether \p a and \p b are the same file or directory: equal as written,
/// or once symbolic links and relative parts are resolved. False if either
/// does not exist and they are spelled differently.
bool isSamePath(llvm::StringRef a, llvm::StringRef b);

} // namespace dync::python
