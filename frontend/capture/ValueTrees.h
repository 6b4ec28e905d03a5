//===- ValueTrees.h - Pytrees of capture's values ----------------*- C++ -*-===//
//
// torch's control-flow operators take and return pytrees: tuples, lists and
// dicts nested, with tensors (and constants) as leaves. These flatten a
// value into its leaves and shape, and build a value of a shape back.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/Value.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace dync::capture {

/// The shape of a pytree of values: tuples, lists and dicts are nodes,
/// everything else a leaf, as torch's pytree sees capture's containers.
struct TreeShape {
  enum class Kind { Leaf, Tuple, List, Dict } kind = Kind::Leaf;
  std::vector<ValuePtr> keys; ///< a dict's, in order
  std::vector<TreeShape> children;

  bool operator==(const TreeShape& other) const;
};

/// Flattens \p value into \p leaves, returning its shape. A named tuple, a
/// dict subclass or an object of a class made while capturing, which
/// torch's pytree may treat as a node, is refused rather than guessed at;
/// \p op names the operator in that message ("torch map").
llvm::Expected<TreeShape> flattenTree(llvm::StringRef op, const ValuePtr& value,
                                      std::vector<ValuePtr>& leaves);

/// The pytree of \p shape with the leaves taken in order from \p leaves,
/// starting at \p next.
ValuePtr unflattenTree(const TreeShape& shape, llvm::ArrayRef<ValuePtr> leaves, size_t& next);

} // namespace dync::capture
