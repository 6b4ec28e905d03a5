//===- TorchSize.h - torch.Size values over symbolic sizes ----------------===//
//
// A torch.Size is a Tuple value whose `object` is the torch.Size type and
// whose items are ints and SymInts: what `x.shape` gives with --dynamic
// sizes. Sizes made only of constants are real objects, computed by
// CPython; these build and use the others, whose items only torch's
// ShapeEnv knows.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/BuiltinRegistry.h"
#include "frontend/capture/Value.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace dync::capture {

class BuiltinContext;
class SemanticsContext;

/// `torch.Size(iterable)`: the iterable is unpacked symbolically (a list, a
/// tuple, a generator over sizes), then torch.Size itself checks and builds
/// the result from the ints and SymInts it gives, so what it accepts is
/// torch's rule.
llvm::Expected<ValuePtr> constructSize(BuiltinContext& interp, const std::vector<ValuePtr>& args,
                                       const KeywordArgs& kwargs);

/// Whether \p value is a torch.Size value some of whose items are symbolic.
bool isSymbolicSize(const SemanticsContext& cx, const ValuePtr& value);

/// Registers the torch.Size methods capture computes itself (`numel`):
/// torch's own would make every symbolic size a constant.
llvm::Error registerSizeHandlers(BuiltinContext& interp);

/// Method \p name of a torch.Size with symbolic items (`numel`, `count`,
/// `index`): bound to the real torch.Size of those SymInts and run by the
/// oracle, which records what it decides on them in the ShapeEnv.
llvm::Expected<ValuePtr> symbolicSizeMethod(SemanticsContext& cx, const ValuePtr& size,
                                            llvm::StringRef name);

} // namespace dync::capture
