//===- PythonError.h - Python exceptions as llvm::Error --------------------===//
#pragma once

#include "llvm/Support/Error.h"

#include <string>

namespace dync::python {

/// A Python exception turned into an llvm::Error: what dync was doing when it
/// was raised, the exception's type name and message and, when it came from
/// user code, the traceback trimmed to the user's own frames. Holds no Python
/// objects, so it outlives the interpreter.
class PythonException : public llvm::ErrorInfo<PythonException> {
public:
  static char ID;

  PythonException(std::string typeName, std::string message, std::string traceback,
                  std::string context = "")
      : typeName_(std::move(typeName)), message_(std::move(message)),
        traceback_(std::move(traceback)), context_(std::move(context)) {}

  const std::string& typeName() const { return typeName_; }
  const std::string& exceptionMessage() const { return message_; }
  /// "Traceback (most recent call last): ..." through the final exception
  /// line (chained exceptions included), or empty when no frame was left.
  const std::string& traceback() const { return traceback_; }
  /// What dync was doing, as a phrase that reads well before "raised", e.g.
  /// "importing 'model.py'". May be empty.
  const std::string& context() const { return context_; }

  /// One line: "<context> raised <type>: <message>".
  void log(llvm::raw_ostream& os) const override;
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }

private:
  std::string typeName_;
  std::string message_;
  std::string traceback_;
  std::string context_;
};

/// Takes the pending Python exception (which must be set) and returns it as
/// an error, prefixed with \p context. The traceback is kept only for frames
/// that are not the interpreter's import machinery. GIL held.
llvm::Error takePythonError(const llvm::Twine& context);

} // namespace dync::python
