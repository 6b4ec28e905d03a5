//===- GuardsKeepApart.h - Sources that guards already tell apart ---------===//
//
// Capture answers `a is b` between objects read through two sources with a
// `same` or `distinct` guard. A program that walks a model's modules and
// parameters (`next(p.dtype for p in self.parameters())`, whose memo sets
// compare each new module with every earlier one) asks that of every pair:
// thousands of `distinct` guards whose answer other guards already give,
// since two sources guarded to types of different names, or to tensor types
// no one tensor has, cannot reach one object. The graph keeps only the
// `distinct` guards nothing else implies.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Guard.h"

#include "llvm/ADT/StringMap.h"

#include <string>

namespace dync::capture {

/// Whether a tensor of type \p a could pass a tensor guard of type \p b
/// too: the same dtype, device, rank and requires_grad, and sizes that
/// agree where both are constants.
bool couldBeOneTensor(const ir::Type& a, const ir::Type& b);

/// What the `type` and `tensor` guards of one graph say about its sources.
class GuardsKeepApart {
public:
  /// Notes \p guard if it is a `type` or `tensor` guard.
  void note(const ir::Guard& guard);
  /// Whether every call that passes the noted guards has two different
  /// objects at \p a and \p b: both type-guarded to different names, or
  /// both tensor-guarded to types no one tensor could have.
  bool apart(const ir::Source& a, const ir::Source& b) const;
  /// Whether \p guard is a `distinct` guard the noted guards imply.
  bool implied(const ir::Guard& guard) const;

private:
  llvm::StringMap<std::string> typeNames_;
  llvm::StringMap<ir::Type> tensorTypes_;
};

} // namespace dync::capture
