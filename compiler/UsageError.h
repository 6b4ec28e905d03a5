//===- UsageError.h - A request that cannot be acted on -------*- C++ -*-===//
#pragma once

#include "llvm/Support/Error.h"

#include <string>

namespace dync::compiler {

/// Options that cannot be acted on together (a malformed spec, an output
/// two source files would share); the driver exits with its usage status.
class UsageError : public llvm::ErrorInfo<UsageError> {
public:
  static char ID;
  explicit UsageError(std::string message) : message_(std::move(message)) {}
  void log(llvm::raw_ostream& os) const override { os << message_; }
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }

private:
  std::string message_;
};

} // namespace dync::compiler
