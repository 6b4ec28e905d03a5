//===- ShimInternal.h - What the shim's translation units share -----------===//
//
// The mapping between C handles and ATen tensors, shared by Shim.cpp and
// ShimPython.cpp, and exported for C++ hosts (and tests) that hold at::Tensor
// values and call graphs whose interface is handles.
//
//===----------------------------------------------------------------------===//

#ifndef DYNC_RUNTIME_SHIM_SHIMINTERNAL_H
#define DYNC_RUNTIME_SHIM_SHIMINTERNAL_H

#include "runtime/shim/dync_shim.h"

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <string>
#include <vector>

namespace dync::shim {

/// Records `message` as this thread's last error and returns `status`.
DYNC_SHIM_EXPORT dync_status fail(dync_status status, std::string message);
DYNC_SHIM_EXPORT const char* lastErrorMessage();

/// A handle is a TensorImpl* that owns one reference.
DYNC_SHIM_EXPORT c10::TensorImpl* toImpl(const dync_tensor* t);
/// A new at::Tensor sharing the handle's TensorImpl; the handle keeps its
/// reference.
DYNC_SHIM_EXPORT at::Tensor toTensor(const dync_tensor* t);
/// Moves `t`'s reference into a handle; NULL for an undefined tensor.
DYNC_SHIM_EXPORT dync_tensor* releaseToHandle(at::Tensor&& t);

/// The arguments pushed on \p stack for its next call, or the first push's
/// error when one failed (then the values are not to be used).
DYNC_SHIM_EXPORT std::vector<c10::IValue>& stackArguments(dync_stack* stack,
                                                          const std::string** pushError);
/// Replaces \p stack's arguments with \p results, taken as a call's.
DYNC_SHIM_EXPORT void setStackResults(dync_stack* stack, std::vector<c10::IValue> results);

} // namespace dync::shim

#endif // DYNC_RUNTIME_SHIM_SHIMINTERNAL_H
