//===- OperatorSchemas.h - torch's schemas of the operators a graph calls -===//
//
// Codegen places keyword arguments by schema position and never asks torch
// itself (decision: codegen sees plain data only); the driver reads the
// schemas of the operators its graphs call from the torch that captured
// them, through this function.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include "llvm/Support/Error.h"

#include <string>

namespace dync::oracle {

/// One schema per distinct operator overload called in \p graphs, as torch
/// prints it (`aten::clone(Tensor self, *, MemoryFormat? memory_format=None)
/// -> Tensor`), one per line. GIL held; torch imported.
llvm::Expected<std::string> operatorSchemas(llvm::ArrayRef<const ir::Graph*> graphs);

} // namespace dync::oracle
