//===- LoopStep.h - One step of an unrolled loop operator -------*- C++ -*-===//
//
// A step of scan or while_loop calls the program's function on the carried
// values; eager's operators forbid that function to write its inputs in
// place or to return one of them (or a view of one), since their traced
// function runs on buffers the loop reuses. An unrolled step records its
// calls into the graph like any other code, so the check reads the nodes
// the step added.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/Value.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace dync::ir {
class Node;
}

namespace dync::capture {

class BuiltinContext;

/// The graph as a step starts: its nodes, and those recording the step's
/// inputs (an in-place write records a new node for the tensor it writes).
struct StepStart {
  llvm::DenseSet<const ir::Node*> before;
  llvm::DenseSet<const ir::Node*> inputs;
};

/// Notes the graph before a step on \p inputs.
StepStart startStep(BuiltinContext& interp, const std::vector<ValuePtr>& inputs);

/// Fails, naming \p what ("torch scan's combine_fn"), when a node added
/// since \p start writes one of its inputs (or a view of one) in place, or
/// when one of \p outputs is one of them or a view of one, or the same
/// tensor as another output.
llvm::Error checkStepEffects(BuiltinContext& interp, const StepStart& start,
                             const std::vector<ValuePtr>& outputs, const llvm::Twine& what);

/// The first of "dtype", "shape" and "device" in which tensor \p got
/// differs from \p want, compared as eager's loop operators compare a next
/// carry with the last (strides aside), or null when they agree.
llvm::Expected<const char*> differingMetadata(BuiltinContext& interp, const ValuePtr& want,
                                              const ValuePtr& got);

} // namespace dync::capture
