//===- TorchConstants.h - Guards on torch's dtype and device objects ------===//
//
// A program may keep a torch.dtype, torch.device, layout or memory format in
// a variable it reads while capturing (a module-level `DTYPE =
// torch.float16`, a config's `device`, `torch.float32` itself). The graph
// bakes the value in, so the guard must check which one it is: an `equals`
// guard with the IR's spelling of it (`equals G['DTYPE'] : f16`), checked
// natively against the object's exact type and torch's name for it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/TorchTypes.h"
#include "ir/Argument.h"

#include <Python.h>

#include <optional>

namespace dync::capture {

/// The IR constant for \p object, an instance of exactly torch.dtype,
/// torch.device, torch.layout or torch.memory_format (\p kind says which);
/// nullopt when the IR has no spelling for it (a float8 dtype, a sparse
/// layout the IR lacks, a device type other than cpu, cuda and meta).
enum class TorchConstantKind { DType, Device, Layout, MemoryFormat };
std::optional<ir::Argument> torchConstantArgument(PyObject* object, TorchConstantKind kind);

/// Which of those \p object is an instance of exactly, if any.
std::optional<TorchConstantKind> torchConstantKind(PyObject* object, const TorchTypes& types);

} // namespace dync::capture
