//===- TensorDataAssignment.h - `t.data = v` in captured code ---*- C++ -*-===//
//
// `self.weight.data *= self.mask` (PixelCNN's masked convolution; any
// augmented assignment to `.data`, `p.data /= norm`) multiplies the tensor
// `.data` gives in place, then assigns the result back to `.data`. The
// in-place call is a graph node on an alias of the tensor; the assignment
// gives the tensor its own storage and layout again, which changes nothing.
// Capture accepts exactly that assignment and refuses one that would swap
// the tensor's storage for another's (docs/capture.md, "Side effects").
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/Value.h"

#include "llvm/Support/Error.h"

#include <string>

namespace dync::capture {

/// `tensor.data = value` for the tensor value \p tensor (named \p target in
/// messages): success, recording nothing, when \p value views the very
/// memory \p tensor does (same storage, offset, sizes, strides, dtype and
/// device); a capture error saying what is not supported otherwise.
llvm::Error assignTensorData(const ValuePtr& tensor, const ValuePtr& value,
                             const std::string& target);

} // namespace dync::capture
