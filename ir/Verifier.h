//===- Verifier.h - Structural rules every graph obeys ---------*- C++ -*-===//
//
// Passes may assume what the verifier checks, and codegen relies on it: run
// it after building or parsing a graph and after every pass. The rules are
// listed in docs/graph-ir.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/SourceMgr.h"

namespace dync::ir {

/// Checks \p graph and reports every violation in one error, each naming the
/// node at fault. With \p sm, the SourceMgr the graph was parsed with, each
/// becomes a diagnostic with file, line, column and caret; otherwise it reads
/// `error: graph @name: message`.
llvm::Error verify(const Graph& graph, const llvm::SourceMgr* sm = nullptr);

/// Checks every graph of \p module, and that graph names are unique.
llvm::Error verify(const Module& module, const llvm::SourceMgr* sm = nullptr);

} // namespace dync::ir
