//===- GuardCodegen.h - A graph's guards to a native guard function -------===//
//
// Compiles an ir::GuardSet, with its graph's symbols, ranges and relations,
// into an LLVM function with dync_artifact.h's dync_guard_fn signature:
//
//   int guard(PyObject* const* fast_locals, PyObject* globals,
//             const char** reason);
//
// Sources are evaluated natively (L['x'] is the frame slot of x in the
// GuardSet's local names; attributes, items and globals through the shim
// table's Python-object readers, which run no Python-level code), each
// guard is checked in order, and the first failure returns 0 with *reason
// set to a constant string naming the guard in sources, as
// `--emit=guards` prints it, with a static detail (`tensor L['x'] :
// tensor<f32, [batch, 784]>: size(0) (batch) is outside [1, 1024]`).
// Version guards are not compiled: the loader checks versions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/GraphCodegen.h"
#include "ir/Graph.h"
#include "ir/Guard.h"

#include "llvm/IR/Function.h"
#include "llvm/Support/Error.h"

namespace dync::codegen {

/// Emits the guard function of \p graph (its guards(), symbols and
/// relations) as an internal function named \p functionName. What cannot be
/// checked at run time is an error here, never a guard that might pass
/// wrongly: a symbol no tensor guard's dimension binds, a local the guards
/// block does not name. See docs/codegen.md, "Guards".
llvm::Expected<llvm::Function*> emitGuardFunction(ShimModule& shim, const ir::Graph& graph,
                                                  llvm::StringRef functionName);

} // namespace dync::codegen
