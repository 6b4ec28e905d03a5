//===- FunctionTransforms.h - torch.func's transforms, refused by name ----===//
//
// torch.func's transforms (vmap, grad, jacrev, ...) run the function they
// wrap under functorch's interpreters: batched or differentiated tensors
// made in C++, which capture's fake tensors do not model. Inlined, they
// stop deep inside functorch at whatever C builtin comes first (a lock
// taken while loading decompositions). Capture refuses them where the
// program calls them, naming the transform, so the reason reads as the
// program wrote it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <Python.h>

#include <optional>
#include <string>

namespace dync::capture {

/// `torch.func.NAME` when \p function is one of torch.func's function
/// transforms (by identity; `torch.vmap` is `torch.func.vmap`), else none.
std::optional<std::string> functionTransformName(PyObject* function);

} // namespace dync::capture
