//===- KernelViews.h - Views a kernel reads through -------------*- C++ -*-===//
//
// A view (unsqueeze, permute, slice, ...) computes nothing: its type's sizes
// and strides already say where each of its elements lies in its operand's
// storage, and only the position of its first element is missing from the
// type. A kernel reads through a view of one of its inputs by loading with
// the view's strides from the input's data pointer moved by that offset, so
// fusion takes the view's base as the kernel's input instead of the view,
// which then costs no ATen call and no run-time layout check.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Argument.h"
#include "ir/SymExpr.h"

#include <optional>

namespace dync::ir {

class Node;

/// When \p node is a view kernels can read through, the element offset of
/// its first element from its first argument's: an overload that returns a
/// view of that argument (unsqueeze, squeeze, permute, expand, view, t,
/// transpose, alias, slice, select), of a dtype kernels load, whose offset
/// is known at compile time. nullopt for anything else, including a slice
/// start or select index that is negative on a symbolic size.
std::optional<SymExpr> viewOffset(const Node& node, Context& ctx);

/// What a chain of kernel views reads: the node at its root (the first
/// value that is not such a view) and the element offset of the chain's
/// first element from the root's.
struct ViewedBase {
  ValueRef root;
  SymExpr offset;
};
/// Follows \p ref through kernel views to their root; \p ref itself when
/// it is no kernel view.
ViewedBase viewedBase(const ValueRef& ref, Context& ctx);

} // namespace dync::ir
