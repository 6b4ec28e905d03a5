//===- SourceError.h - An error that points into the user's source --------===//
#pragma once

#include "llvm/Support/Error.h"

#include <string>

namespace dync::python {

/// Where in the user's source a problem is, as precisely as it is known.
struct SourceLocation {
  /// The file as the user named it; empty when the problem has no file.
  std::string file;
  /// 1-based; 0 when only the file is known.
  unsigned line = 0;
  /// 1-based, in characters; 0 when only the line is known.
  unsigned column = 0;
  /// One past the last column of the offending range; 0 when it is a point.
  unsigned endColumn = 0;
  /// The text of the offending line, for showing it with a caret; may be
  /// empty.
  std::string lineText;
};

/// A problem in the user's input that the driver shows the way a compiler
/// does: "file:line:col: error: message", then the line and a caret.
class SourceError : public llvm::ErrorInfo<SourceError> {
public:
  static char ID;

  SourceError(SourceLocation location, std::string message)
      : location_(std::move(location)), message_(std::move(message)) {}

  const SourceLocation& location() const { return location_; }
  const std::string& text() const { return message_; }

  void log(llvm::raw_ostream& os) const override;
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }

private:
  SourceLocation location_;
  std::string message_;
};

} // namespace dync::python
