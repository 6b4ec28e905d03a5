//===- CaptureDiagnostics.cpp - Capture errors as compiler diagnostics ----===//
#include "compiler/CaptureDiagnostics.h"
#include "compiler/LibraryAdvice.h"

#include "frontend/capture/CaptureError.h"
#include "frontend/embedding/SamePath.h"
#include "frontend/embedding/SourceError.h"

#include "llvm/Support/Path.h"

namespace dync::compiler {

using capture::CaptureError;
using capture::CaptureFrame;
using capture::isTorchSource;

namespace {

/// The frame to show: the innermost one in the user's file; when none is
/// (the entry is a library's, as a transformers model's forward), the
/// innermost outside torch, which is the library line that called into
/// torch; else the innermost.
size_t chosenFrame(const std::vector<CaptureFrame>& stack, const std::string& userFile,
                   bool& inUserFile) {
  inUserFile = false;
  for (size_t i = 0; i < stack.size(); ++i)
    if (stack[i].location.file == userFile ||
        python::isSamePath(stack[i].location.file, userFile)) {
      inUserFile = true;
      return i;
    }
  for (size_t i = 0; i < stack.size(); ++i)
    if (!isTorchSource(stack[i].location.file))
      return i;
  return 0;
}

} // namespace

llvm::Error placeCaptureErrors(llvm::Error error, const std::string& userFile,
                               const std::string& displayPath) {
  return llvm::handleErrors(std::move(error), [&](const CaptureError& capture) -> llvm::Error {
    const std::vector<CaptureFrame>& stack = capture.stack();
    if (stack.empty())
      return llvm::make_error<python::SourceError>(python::SourceLocation{}, capture.reason());
    // The user's own line is the one to show; frames are innermost first.
    bool inUserFile = false;
    size_t chosen = chosenFrame(stack, userFile, inUserFile);
    const CaptureFrame& frame = stack[chosen];
    std::string message = capture.reason();
    if (chosen > 0) {
      const CaptureFrame& inner = stack.front();
      message += " (in " + inner.function + ", " + inner.location.file + ":" +
                 std::to_string(inner.location.line) + ")";
    }
    // Torch's lines cannot be changed, only how the program calls them.
    if (std::string advice = libraryAdvice(capture); !advice.empty())
      message += "; " + advice;
    python::SourceLocation location = frame.location;
    if (inUserFile)
      location.file = displayPath;
    return llvm::make_error<python::SourceError>(std::move(location), std::move(message));
  });
}

} // namespace dync::compiler
