//===- TorchTypes.h - The Python types capture recognizes -----------------===//
#pragma once

#include "frontend/embedding/PyRef.h"

#include <vector>

namespace dync::capture {

/// Python types capture recognizes, read once from torch.
struct TorchTypes {
  python::PyRef torch, tensor, module, parameter, dtype, device, layout, memoryFormat, size, symInt,
      symFloat, symBool, opOverload, opOverloadPacket, operatorModule, builtinsModule, orderedDict,
      legacyVariableBase, floatTensor, variableFunctions;
  /// Context managers that only switch torch's grad mode: they run for
  /// real while capture is inside their block, so the oracle sees the mode.
  std::vector<python::PyRef> gradModeManagers;
  /// Classes whose instances are plain immutable data: constructing one
  /// from constants runs in CPython (torch.finfo(dtype).min).
  std::vector<python::PyRef> pureClasses;
};

} // namespace dync::capture
