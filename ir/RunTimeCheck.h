//===- RunTimeCheck.h - The text of a check capture records ---------------===//
//
// A branch on a tensor's values whose one side only raises becomes
// `aten::_assert_async.msg(%ok, "<text>")` (docs/capture.md, "Branches that
// only raise"). The text is the exception eager raises ("ValueError: ..."),
// which an artifact raises again when the check fails; or, when capture
// cannot make that exception again (its message formats tensor values, its
// class is the program's own), the fall-back form "fall back: <what>": a
// failing check then runs the program's original code, which raises what
// eager raises, if the graph has done nothing the caller could see yet.
//
//===----------------------------------------------------------------------===//
#ifndef DYNC_IR_RUNTIMECHECK_H
#define DYNC_IR_RUNTIMECHECK_H

#include "llvm/ADT/StringRef.h"

#include <optional>

namespace dync::ir {

inline constexpr llvm::StringLiteral FallBackCheckPrefix = "fall back: ";

/// What a fall-back check's text says happens (after the prefix), or none
/// for a check that raises its text's exception.
inline std::optional<llvm::StringRef> fallBackCheckWhat(llvm::StringRef text) {
  if (!text.consume_front(FallBackCheckPrefix))
    return std::nullopt;
  return text;
}

} // namespace dync::ir

#endif // DYNC_IR_RUNTIMECHECK_H
