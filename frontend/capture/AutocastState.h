//===- AutocastState.h - torch's autocast state around a capture ----------===//
//
// A program's `with torch.autocast(...)` switches autocast for real while
// capture runs inside it, so the oracle's fake calls make the casts eager
// makes (docs/capture.md, "Autocast regions"). A capture that stops inside
// such a region (an error, a refused construct) never runs its __exit__:
// the state must be put back, or every later capture in the process (the
// next entry, the next variant) would record casts its program never asked
// for.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/Support/Error.h"

#include <Python.h>

namespace dync::capture {

/// What torch's CPU autocast is set to: enabled, its dtype, the cast cache
/// and the depth of nested regions.
class AutocastState {
public:
  static llvm::Expected<AutocastState> read(PyObject* torch);
  /// Sets torch's state back to this one; errors are cleared, since this
  /// runs while another error may be on its way out.
  void restore(PyObject* torch) const;

private:
  bool enabled_ = false;
  bool cacheEnabled_ = true;
  long nesting_ = 0;
  PyObject* dtype_ = nullptr; // a torch.dtype, immortal for the process
};

} // namespace dync::capture
