//===- TensorMetaSchema.h - Where each TensorMeta field is ----*- C++ -*-===//
//
// The oracle's Python half describes each result tensor as a TensorMeta, a
// tuple whose fields it declares once, by name, in TensorMeta.FIELDS. The
// C++ half reads that declaration when the oracle starts and finds each
// field it needs by name, so the two halves cannot disagree on an order: a
// field missing, repeated or unknown to this side stops the start-up with an
// error naming it, as a mismatched opcode table does.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/Support/Error.h"

#include <Python.h>

namespace dync::oracle {

/// The position of each TensorMeta field in the tuple.
struct TensorMetaSchema {
  unsigned id = 0;
  unsigned dtype = 0;
  unsigned sizes = 0;
  unsigned strides = 0;
  unsigned device = 0;
  unsigned requiresGrad = 0;
  /// None for a strided tensor; (sparse_dim, nnz, is_coalesced) for a
  /// sparse COO one.
  unsigned sparse = 0;
  /// How many fields a TensorMeta has.
  unsigned size = 0;
};

/// Reads the positions from \p fields, TensorMeta.FIELDS: a tuple of the
/// field names, each of `id`, `dtype`, `sizes`, `strides`, `device`,
/// `requires_grad` and `sparse` exactly once, and no other. GIL held.
llvm::Expected<TensorMetaSchema> readTensorMetaSchema(PyObject* fields);

} // namespace dync::oracle
