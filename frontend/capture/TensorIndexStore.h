//===- TensorIndexStore.h - `t[i] = v` with a 0-d integer tensor i -*- C++ -*-===//
//
// `best_truth_idx[best_prior_idx[j]] = j` (SSD's prior matching) indexes by
// a 0-d integer tensor. Eager reads the index's value (Tensor.item) and
// writes through `select(0, i)`, a value capture cannot know, so the write
// as eager spells it needs a number that exists only when the graph runs.
// `index_put_` with the 0-d index writes the same elements (negative
// indices counted from the end, values broadcast to the row, cast to the
// tensor's dtype as copy_ casts them), records the same autograd, and
// checks the bound when the graph runs, as eager's select does.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/MachineContext.h"
#include "frontend/capture/Value.h"

#include "llvm/Support/Error.h"

#include <optional>

namespace dync::capture {

/// `base[key] = value` for the tensor \p base when \p key is a 0-d tensor
/// of an integer type eager reads as a number (not bool or uint8, which
/// index as masks): recorded as `base.index_put_((key,), values)`, and
/// true. False, recording nothing, for any other key.
llvm::Expected<bool> storeAtTensorIndex(MachineContext& context, const ValuePtr& base,
                                        const ValuePtr& key, const ValuePtr& value);

} // namespace dync::capture
