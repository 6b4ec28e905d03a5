//===- CaptureError.cpp - Why capture stopped, and where ------------------===//
#include "frontend/capture/CaptureError.h"

#include "llvm/Support/raw_ostream.h"

namespace dync::capture {

char CaptureError::ID = 0;

bool isTorchSource(llvm::StringRef file) {
  return file.contains("/site-packages/torch/") || file.contains("/dist-packages/torch/");
}

void CaptureError::log(llvm::raw_ostream& os) const {
  if (!stack_.empty())
    os << stack_.front().location.file << ":" << stack_.front().location.line << ": ";
  os << reason_;
}

} // namespace dync::capture
