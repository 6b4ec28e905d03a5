//===- CaptureDiagnostics.cpp - Capture errors as compiler diagnostics ----===//
#include "compiler/CaptureDiagnostics.h"

#include "frontend/capture/CaptureError.h"
#include "frontend/embedding/SamePath.h"
#include "frontend/embedding/SourceError.h"

#include "llvm/Support/Path.h"

namespace dync::compiler {

using capture::CaptureError;
using capture::CaptureFrame;

llvm::Error placeCaptureErrors(llvm::Error error, const std::string& userFile,
                               const std::string& displayPath) {
  return llvm::handleErrors(std::move(error), [&](const CaptureError& capture) -> llvm::Error {
    const std::vector<CaptureFrame>& stack = capture.stack();
    if (stack.empty())
      return llvm::make_error<python::SourceError>(python::SourceLocation{}, capture.reason());
    // The user's own line is the one to show; frames are innermost first.
    size_t chosen = 0;
    bool inUserFile = false;
    for (size_t i = 0; i < stack.size(); ++i)
      if (stack[i].location.file == userFile ||
          python::isSamePath(stack[i].location.file, userFile)) {
        chosen = i;
        inUserFile = true;
        break;
      }
    const CaptureFrame& frame = stack[chosen];
    std::string message = capture.reason();
    if (chosen > 0) {
      const CaptureFrame& inner = stack.front();
      message += " (in " + inner.function + ", " + inner.location.file + ":" +
                 std::to_string(inner.location.line) + ")";
    }
    python::SourceLocation location = frame.location;
    if (inUserFile)
      location.file = displayPath;
    return llvm::make_error<python::SourceError>(std::move(location), std::move(message));
  });
}

} // namespace dync::compiler
