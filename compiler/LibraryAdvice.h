//===- LibraryAdvice.h - What to do when capture stops inside torch -------===//
#pragma once

#include "frontend/capture/CaptureError.h"

#include <string>

namespace dync::compiler {

/// What the program's author can do instead when capture stops inside one of
/// torch's own functions for a reason that function's arguments or
/// construction decide (a causal mask detected by comparing values, an
/// encoder's nested-tensor fast path, dynamically quantized weights, a packed
/// sequence): the author cannot change torch's lines, only how they call it.
/// Empty when no advice is known for where \p error arose.
std::string libraryAdvice(const capture::CaptureError& error);

} // namespace dync::compiler
