//===- SymbolicText.h - The text of symbolic sizes --------------*- C++ -*-===//
//
// CPython spells a symbolic size (a --dynamic dimension) by its symbol's
// name, where eager prints each call's number; a graph computes no text.
// So formatting one (an f-string, str()) stops capture.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/Value.h"

namespace dync::capture {

/// Whether a symbolic number is inside \p value (deeply, through
/// containers).
bool holdsSymbolicNumber(const ValuePtr& value);

/// Why the text of a symbolic number is not captured.
inline constexpr const char* SymbolicTextRefusal =
    "the text of a symbolic size would differ from call to call, and a graph cannot compute "
    "text; format it outside the exported function, or leave that size out of --dynamic";

} // namespace dync::capture
