//===- Parser.h - Reading the graph IR's text form -------------*- C++ -*-===//
//
// Reads `.dync` text back into graphs. Parsing checks syntax and resolves
// value names; whether the result is a valid graph is the verifier's job, so
// a malformed graph can be read, then reported with every problem located.
// Errors are rendered diagnostics: `file:line:col: error: message`, the
// source line and a caret.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>

namespace dync::ir {

/// Parses every graph in the main buffer of \p sm. Node locations point into
/// that buffer, so keep \p sm alive to verify the result with locations.
llvm::Expected<std::unique_ptr<Module>> parseModule(llvm::SourceMgr& sm, Context& ctx);

/// Parses one symbolic integer, e.g. `2*s0 + (s1 floordiv 2)`.
llvm::Expected<SymExpr> parseSymExpr(llvm::StringRef text, Context& ctx);

/// Parses one type, e.g. `tensor<f32, [s0, 784]>`.
llvm::Expected<Type> parseType(llvm::StringRef text, Context& ctx);

} // namespace dync::ir
