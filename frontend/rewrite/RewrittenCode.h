//===- RewrittenCode.h - The bytecode that runs a compiled graph ----------===//
//
// For a function captured whole, the rewritten code object has the original's
// signature, names, flags, cells and free variables, and a body that
//
//   1. evaluates each graph input from its source (ir/Source.h): tensor
//      inputs in graph order, then int inputs in graph order;
//   2. calls the compiled graph through the global `graphGlobal`, which the
//      runtime binds to a callable taking (tensors..., ints...) and returning
//      a tuple of the graph's tensor results (ir::outputLeaves order);
//   3. rebuilds the returned Python value from the graph's output argument:
//      tensors from that tuple, tuples and lists, constants (None, bool, int,
//      float, str), and symbolic integers computed from the sizes of the
//      inputs that bind their symbols;
//   4. replays the graph's side effects (ir::SideEffect) on the caller's
//      objects: attributes and globals assigned, lists and dicts refilled,
//      each value rebuilt as the returned one is;
//   5. returns it.
//
// The code object is built with the bytecode toolkit (frontend/bytecode),
// its stack depth computed, and serialized with marshal.dumps.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

struct _object;

namespace dync::rewrite {

/// Builds the rewritten code object for \p originalCode (a borrowed
/// PyCodeObject*) running \p graph, and returns marshal.dumps() of it.
/// Unsupported cases (a result kind it cannot rebuild, a source it cannot
/// evaluate) are errors saying so. GIL held.
llvm::Expected<std::vector<uint8_t>> rewriteWholeFunction(struct _object* originalCode,
                                                          const ir::Graph& graph,
                                                          llvm::StringRef graphGlobal);

/// The same, but returns a new reference to the code object itself (for
/// tests and for `--emit=bytecode`-style listings).
llvm::Expected<struct _object*> buildWholeFunctionCode(struct _object* originalCode,
                                                       const ir::Graph& graph,
                                                       llvm::StringRef graphGlobal);

/// The global through which the rewritten code of the \p index-th entry of
/// an export calls \p graph: `__dync_graph_<index>_<graph name>`, with every
/// character that cannot be in an identifier replaced by `_`. Entries of one
/// module bind their graphs in the same globals, so the index keeps them
/// apart.
std::string graphGlobalName(const ir::Graph& graph, size_t index);

} // namespace dync::rewrite
