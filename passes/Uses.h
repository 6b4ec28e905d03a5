//===- Uses.h - Finding and rewriting the uses of values -------*- C++ -*-===//
//
// Nodes refer to the values they use directly (Argument::value), with no
// use lists, so passes find and rewrite uses by walking the graph. Graphs
// are a few thousand nodes at most; a walk per rewrite is cheap.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Argument.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace dync::ir {
class Graph;
} // namespace dync::ir

namespace dync::transforms {

/// For each node, the nodes that use its result (once per use, the output
/// included).
using UserMap = llvm::DenseMap<const ir::Node*, llvm::SmallVector<ir::Node*, 4>>;
UserMap collectUsers(const ir::Graph& graph);

/// Makes every use of \p from (`%from`, `%from#i`) a use of \p to instead,
/// keeping the element index.
void replaceAllUses(ir::Graph& graph, const ir::Node* from, ir::Node* to);

/// Replaces every argument that is exactly \p use by \p replacement (a
/// literal, or another value).
void replaceUses(ir::Graph& graph, const ir::ValueRef& use, const ir::Argument& replacement);

} // namespace dync::transforms
