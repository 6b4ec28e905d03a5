//===- CaptureError.h - Why capture stopped, and where --------------------===//
#pragma once

#include "frontend/embedding/SourceError.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace dync::capture {

/// One frame of the symbolic call stack at the point capture stopped.
struct CaptureFrame {
  /// The instruction being executed: file, line, column range, line text.
  python::SourceLocation location;
  /// The function's qualified name.
  std::string function;
};

/// Whether \p file is one of torch's own sources (an installed torch:
/// `.../site-packages/torch/...`), whose lines the program's author did not
/// write and cannot change.
bool isTorchSource(llvm::StringRef file);

/// Capture cannot go on: an unsupported opcode, a call that cannot be traced,
/// a data-dependent branch, a shape error from torch. Carries the reason and
/// the symbolic call stack, innermost frame first. Holds no Python objects.
class CaptureError : public llvm::ErrorInfo<CaptureError> {
public:
  static char ID;

  CaptureError(std::string reason, std::vector<CaptureFrame> stack = {})
      : reason_(std::move(reason)), stack_(std::move(stack)) {}

  const std::string& reason() const { return reason_; }
  /// Innermost first; empty if capture stopped outside any frame.
  const std::vector<CaptureFrame>& stack() const { return stack_; }
  bool hasLocation() const { return !stack_.empty(); }
  void setStack(std::vector<CaptureFrame> stack) { stack_ = std::move(stack); }

  void log(llvm::raw_ostream& os) const override;
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }

private:
  std::string reason_;
  std::vector<CaptureFrame> stack_;
};

/// An error that says why capture stopped, located later by the frame that
/// was executing.
inline llvm::Error captureError(const llvm::Twine& reason) {
  return llvm::make_error<CaptureError>(reason.str());
}

} // namespace dync::capture
