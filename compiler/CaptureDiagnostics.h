//===- CaptureDiagnostics.h - Capture errors as compiler diagnostics ------===//
#pragma once

#include "llvm/Support/Error.h"

#include <string>

namespace dync::compiler {

/// Turns CaptureErrors in \p error into SourceErrors placed at the line of
/// the user's file where capture stopped: the innermost frame in
/// \p userFile (its absolute path), shown as \p displayPath; when capture
/// stopped in a function that file called (a torch.nn.functional helper, a
/// module's forward in another file), the message says where. When no frame
/// is in that file (the entry is a library's own forward), the line shown
/// is the innermost outside torch's sources: the library line that called
/// into torch. Other errors pass through.
llvm::Error placeCaptureErrors(llvm::Error error, const std::string& userFile,
                               const std::string& displayPath);

} // namespace dync::compiler
