//===- OperatorCalls.h - Shared parts of control-flow operators -*- C++ -*-===//
//
// What torch's control-flow operators (ControlFlowOperators.h) share:
// binding a call's arguments as Python would (ArgumentBinding.h), calling a
// method of a value,
// reading a size known while capturing, and the gradient rule eager's
// operators follow as autograd Functions (every differentiable result
// requires grad when an input does, and every input that requires grad
// gets a gradient, zeros where no result uses it).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/ArgumentBinding.h"
#include "frontend/capture/BuiltinRegistry.h"
#include "frontend/capture/Value.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <vector>

namespace dync::capture {

class BuiltinContext;

/// Calls the method \p name of \p self with \p args.
llvm::Expected<ValuePtr> callMethod(BuiltinContext& interp, const ValuePtr& self,
                                    llvm::StringRef name, std::vector<ValuePtr> args);

/// A size as a Python int: a constant, or none for a symbolic one.
std::optional<long long> staticSize(const ValuePtr& size);

/// The real object \p name (`torch.where`) as a value capture calls.
llvm::Expected<ValuePtr> torchFunction(BuiltinContext& interp, llvm::StringRef name);

/// Whether torch's grad mode is on.
llvm::Expected<bool> gradEnabled();

/// Whether \p fake has a dtype autograd differentiates (floating point or
/// complex), as torch says.
llvm::Expected<bool> differentiable(PyObject* fake);

/// With grad mode on, an operator eager runs as an autograd Function
/// returns results that all require grad when an input does, and gives
/// every input that requires grad a gradient, zeros where no result uses
/// it; the calls capture recorded alone would give neither. Which inputs
/// require grad is known when the graph runs, so each differentiable
/// tensor of \p results becomes `torch.where(False, s, r)`: r's value
/// exactly, with s, the sum of the sums of the differentiable tensors of
/// \p inputs in r's dtype, a dependency whose gradient is zeros.
llvm::Error linkInputGradients(BuiltinContext& interp, llvm::ArrayRef<ValuePtr> inputs,
                               std::vector<ValuePtr>& results);

} // namespace dync::capture
