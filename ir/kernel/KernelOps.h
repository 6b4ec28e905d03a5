//===- KernelOps.h - Which graph nodes a generated kernel computes -*- C++ -*-===//
//
// Fusion may put a node into a kernel only if codegen can compute it one
// element (or one reduction) at a time in a generated loop. This is the one
// answer both sides use: the fusion pass asks it, kernel codegen lowers
// exactly what it accepts, and a test checks that every overload accepted
// here has a lowering.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"

namespace dync::ir {

class Node;

enum class KernelOpClass : uint8_t {
  /// Not computed in kernels: the node stays a call into ATen.
  None,
  /// One output element from the elements at the same (broadcast) index of
  /// the tensor arguments.
  Pointwise,
  /// Reduces some dimensions of one tensor argument (sum, amax, mean, ...).
  Reduction,
};

/// The class of \p node in a kernel: None unless its overload, the dtypes of
/// its tensor arguments and result, and its non-tensor arguments (literals,
/// symbolic ints) are all ones kernel codegen lowers.
KernelOpClass kernelOpClass(const Node& node);

} // namespace dync::ir
