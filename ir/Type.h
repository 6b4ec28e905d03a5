//===- Type.h - Types of graph values --------------------------*- C++ -*-===//
//
// What a value in a graph is: a tensor with its dtype, symbolic sizes and
// strides and device, or a Python scalar (`int`, possibly a known symbolic
// value, `float`, `bool`), `none`, or a fixed-length tuple or list of those
// for operators that return several values. Types are plain values: copy
// them, compare them with ==.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/SymExpr.h"
#include "ir/TensorAttributes.h"

#include "llvm/ADT/SmallVector.h"

#include <string>
#include <vector>

namespace dync::ir {

class Type {
public:
  enum class Kind : uint8_t { None, Int, Float, Bool, Tensor, Tuple, List };

  /// `none`.
  Type() = default;
  static Type none() { return Type(); }
  /// `int`, or `int<value>` when the value is known symbolically, as for an
  /// int input that capture made dynamic (`int<s2>`) or `aten::sym_size.int`.
  static Type integer(SymExpr value = SymExpr());
  static Type floating();
  static Type boolean();
  static Type tensor(DType dtype, llvm::ArrayRef<SymExpr> sizes, llvm::ArrayRef<SymExpr> strides,
                     Device device = {}, bool requiresGrad = false);
  /// A sparse COO tensor (torch.sparse_coo): \p sparseDim leading sparse
  /// dimensions, the rest dense; \p nnz, the number of stored entries (the
  /// size of its indices' and values' first dimension), is a symbol the
  /// input's guard binds, so one graph serves every nnz. It has no strides.
  /// \p coalesced is what `is_coalesced()` says: operators read it.
  static Type sparseCooTensor(DType dtype, llvm::ArrayRef<SymExpr> sizes, int64_t sparseDim,
                              SymExpr nnz, bool coalesced, Device device = {},
                              bool requiresGrad = false);
  /// A tensor with contiguous (row-major) strides.
  static Type contiguousTensor(Context& ctx, DType dtype, llvm::ArrayRef<SymExpr> sizes,
                               Device device = {}, bool requiresGrad = false);
  static Type tuple(llvm::ArrayRef<Type> elements);
  static Type list(llvm::ArrayRef<Type> elements);

  Kind kind() const { return kind_; }
  bool isNone() const { return kind_ == Kind::None; }
  bool isTensor() const { return kind_ == Kind::Tensor; }
  /// Tuples and lists: the types `%v#i` can index.
  bool isSequence() const { return kind_ == Kind::Tuple || kind_ == Kind::List; }

  // Tensor.
  DType dtype() const { return dtype_; }
  llvm::ArrayRef<SymExpr> sizes() const { return sizes_; }
  llvm::ArrayRef<SymExpr> strides() const { return strides_; }
  Device device() const { return device_; }
  bool requiresGrad() const { return requiresGrad_; }
  Layout layout() const { return layout_; }
  /// A tensor of a layout other than strided (only sparse COO so far).
  bool isSparse() const { return isTensor() && layout_ != Layout::Strided; }
  // Sparse COO tensors: the number of sparse and dense dimensions, the
  // number of stored entries, and whether they are marked coalesced.
  int64_t sparseDim() const { return sparseDim_; }
  int64_t denseDim() const { return static_cast<int64_t>(sizes_.size()) - sparseDim_; }
  SymExpr nnz() const { return nnz_; }
  bool coalesced() const { return coalesced_; }
  /// Whether the strides are those contiguousStrides() gives for the sizes;
  /// such tensor types print without strides. False for a sparse tensor.
  bool hasContiguousStrides() const;

  // Int: the known value, or null.
  SymExpr intValue() const { return intValue_; }

  // Tuple and list.
  llvm::ArrayRef<Type> elements() const { return elements_; }

  /// Calls \p fn on every symbolic integer in the type, nested ones included.
  void walkSymExprs(llvm::function_ref<void(SymExpr)> fn) const;

  /// `tensor<f32, [s0, 784]>`, `tensor<f32, [784, 256], [1, 784]>`,
  /// `tensor<f16, [8], cuda:0, requires_grad>`,
  /// `tensor<f32, [8, 8], sparse_coo(2, s0)>`, `int<s0>`,
  /// `tuple<tensor<f32, [s0]>, tensor<i64, [s0]>>`.
  void print(llvm::raw_ostream& os) const;
  std::string str() const;

  friend bool operator==(const Type& a, const Type& b);
  friend bool operator!=(const Type& a, const Type& b) { return !(a == b); }

private:
  Kind kind_ = Kind::None;
  DType dtype_ = DType::F32;
  bool requiresGrad_ = false;
  Layout layout_ = Layout::Strided;
  bool coalesced_ = false;
  int64_t sparseDim_ = 0;
  SymExpr nnz_;
  Device device_;
  llvm::SmallVector<SymExpr, 4> sizes_;
  llvm::SmallVector<SymExpr, 4> strides_;
  SymExpr intValue_;
  std::vector<Type> elements_;
};

inline llvm::raw_ostream& operator<<(llvm::raw_ostream& os, const Type& type) {
  type.print(os);
  return os;
}

/// Row-major strides, as torch computes them: each stride is the product of
/// the sizes after it, a constant size 0 counting as 1.
llvm::SmallVector<SymExpr, 4> contiguousStrides(Context& ctx, llvm::ArrayRef<SymExpr> sizes);

} // namespace dync::ir
