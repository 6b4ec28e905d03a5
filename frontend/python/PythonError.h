//===- PythonError.h - Python exceptions as llvm::Error --------------------===//
#pragma once

#include "llvm/Support/Error.h"

#include <string>

namespace dync::python {

/// A Python exception turned into an llvm::Error: its type name, its message
/// and, when it came from user code, the traceback trimmed to the user's own
/// frames.
class PythonException : public llvm::ErrorInfo<PythonException> {
public:
  static char ID;

  PythonException(std::string typeName, std::string message, std::string traceback)
      : typeName_(std::move(typeName)), message_(std::move(message)),
        traceback_(std::move(traceback)) {}

  const std::string& typeName() const { return typeName_; }
  const std::string& exceptionMessage() const { return message_; }
  /// "Traceback (most recent call last): ..." or empty.
  const std::string& traceback() const { return traceback_; }

  void log(llvm::raw_ostream& os) const override;
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }

private:
  std::string typeName_;
  std::string message_;
  std::string traceback_;
};

/// Takes the pending Python exception (which must be set) and returns it as
/// an error, prefixed with \p context. The traceback is kept only for frames
/// that are not the interpreter's import machinery.
llvm::Error takePythonError(llvm::StringRef context);

} // namespace dync::python
