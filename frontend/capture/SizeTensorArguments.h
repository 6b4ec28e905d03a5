//===- SizeTensorArguments.h - Tensors given where a schema takes an int -*- C++ -*-===//
//
// `interpolate(size=(h, w))` with `h` and `w` one-element tensors,
// `x.new_zeros(n)`, `torch.multinomial(p, k)`: torch's argument parser
// reads such a tensor's value where the operator's schema takes an `int` or
// `SymInt` (alone or in a list), inside the call. Read there from a fake
// tensor, the value is a symbol no node computes, which no check can
// specialize. Capture reads it first, as `operator.index(t)` would: an
// item() node, an int from data like any other (docs/capture.md, "Ints from
// data").
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/BuiltinRegistry.h"

#include "llvm/ADT/STLFunctionalExtras.h"

namespace dync::capture {

/// Replaces in \p args and \p kwargs each one-element integer tensor that a
/// call of the ATen binding \p callable takes as an int (the oracle's
/// size_tensor_arguments decides from the schemas, given the call's Python
/// arguments \p pyArgs and \p pyKwargs) by the int the oracle reads from it
/// (\p callOracle of the oracle's reading function and the tensor; a
/// tensor given twice is read once). True when something was replaced.
llvm::Expected<bool> readSizeTensors(
    PyObject* callable, PyObject* pyArgs, PyObject* pyKwargs, std::vector<ValuePtr>& args,
    KeywordArgs& kwargs,
    llvm::function_ref<llvm::Expected<ValuePtr>(PyObject*, const ValuePtr&)> callOracle);

} // namespace dync::capture
