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

#include <string>

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

} // namespace dync::shim

#endif // DYNC_RUNTIME_SHIM_SHIMINTERNAL_H
