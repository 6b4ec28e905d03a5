//===- SamePath.cpp - Whether two spellings name one file -----------------===//
#include "frontend/embedding/SamePath.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"

namespace dync::python {

bool isSamePath(llvm::StringRef a, llvm::StringRef b) {
  if (a == b)
    return true;
  llvm::SmallString<256> realA, realB;
  return !llvm::sys::fs::real_path(a, realA) && !llvm::sys::fs::real_path(b, realB) &&
         realA == realB;
}

} // namespace dync::python
