//===- Vmap.h - torch.func.vmap while capturing -----------------*- C++ -*-===//
//
// torch.vmap runs its function on batched tensors: functorch's C++ wrappers
// that carry a batch dimension, whose operators run as batching rules above
// the Python dispatch modes. So a vmapped function run on fake tensors
// reaches the oracle's recording mode as plain ATen operators on the
// physical (unbatched) fake tensors: addmm over the whole batch, not one
// call per row. Capture interprets torch's own vmap (torch/_functorch/vmap.py:
// the pytree of inputs, in_dims, out_dims, chunk_size) and the program's
// function as any Python, so every read the function makes is guarded, and
// sends vmap's C entry points through the oracle, where they act on the
// fake tensors:
//
// - `torch.func.vmap(func, in_dims, out_dims, randomness, chunk_size=)` is
//   a functools.partial of torch's `vmap_impl` over those arguments, made
//   without functools.wraps (which reads attributes capture does not keep
//   on the functions it makes); randomness and chunk_size are checked as
//   torch checks them.
// - `lazy_load_decompositions` (registering functorch's batching
//   decompositions, once per process) runs for real.
// - `_vmap_increment_nesting`, `_vmap_decrement_nesting`, `_add_batch_dim`
//   and `_remove_batch_dim` run in the oracle: a batched tensor is a tensor
//   value whose graph value is its physical fake's; removing the batch
//   dimension records the movedim or expand it takes.
//
// A vmap level left open when capture stops (an error inside the function)
// is closed when the interpreter goes, so the process's functorch state is
// as it was (VmapLevels).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <Python.h>

#include <optional>

namespace dync::capture {

/// Which of torch's vmap functions capture handles itself.
enum class VmapFunction {
  Vmap,               ///< torch.func.vmap (torch.vmap)
  LoadDecompositions, ///< functorch's lazy_load_decompositions, run for real
  OpenLevel,          ///< _vmap_increment_nesting, run in the oracle
  CloseLevel,         ///< _vmap_decrement_nesting, run in the oracle
  BatchDim,           ///< _add_batch_dim or _remove_batch_dim, run in the oracle
};

/// Which vmap function \p function is (by identity, once torch's functorch
/// modules are imported), or none.
std::optional<VmapFunction> vmapFunction(PyObject* function);

/// The vmap levels capture opened; those still open when it goes are
/// closed, innermost first. GIL held.
class VmapLevels {
public:
  VmapLevels() = default;
  VmapLevels(const VmapLevels&) = delete;
  VmapLevels& operator=(const VmapLevels&) = delete;
  ~VmapLevels();
  /// One more level (\p opened) or one fewer (\p opened false).
  void note(bool opened) { open_ += opened ? 1 : -1; }

private:
  int open_ = 0;
};

} // namespace dync::capture
