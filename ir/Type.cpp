//===- Type.cpp - Types of graph values -----------------------------------===//
#include "ir/Type.h"

namespace dync::ir {

Type Type::integer(SymExpr value) {
  Type t;
  t.kind_ = Kind::Int;
  t.intValue_ = value;
  return t;
}

Type Type::floating() {
  Type t;
  t.kind_ = Kind::Float;
  return t;
}

Type Type::boolean() {
  Type t;
  t.kind_ = Kind::Bool;
  return t;
}

Type Type::tensor(DType dtype, llvm::ArrayRef<SymExpr> sizes, llvm::ArrayRef<SymExpr> strides,
                  Device device, bool requiresGrad) {
  Type t;
  t.kind_ = Kind::Tensor;
  t.dtype_ = dtype;
  t.sizes_.assign(sizes.begin(), sizes.end());
  t.strides_.assign(strides.begin(), strides.end());
  t.device_ = device;
  t.requiresGrad_ = requiresGrad;
  return t;
}

Type Type::sparseCooTensor(DType dtype, llvm::ArrayRef<SymExpr> sizes, int64_t sparseDim,
                           SymExpr nnz, bool coalesced, Device device, bool requiresGrad) {
  Type t = tensor(dtype, sizes, {}, device, requiresGrad);
  t.layout_ = Layout::SparseCoo;
  t.sparseDim_ = sparseDim;
  t.nnz_ = nnz;
  t.coalesced_ = coalesced;
  return t;
}

Type Type::contiguousTensor(Context& ctx, DType dtype, llvm::ArrayRef<SymExpr> sizes, Device device,
                            bool requiresGrad) {
  return tensor(dtype, sizes, contiguousStrides(ctx, sizes), device, requiresGrad);
}

Type Type::tuple(llvm::ArrayRef<Type> elements) {
  Type t;
  t.kind_ = Kind::Tuple;
  t.elements_.assign(elements.begin(), elements.end());
  return t;
}

Type Type::list(llvm::ArrayRef<Type> elements) {
  Type t;
  t.kind_ = Kind::List;
  t.elements_.assign(elements.begin(), elements.end());
  return t;
}

llvm::SmallVector<SymExpr, 4> contiguousStrides(Context& ctx, llvm::ArrayRef<SymExpr> sizes) {
  llvm::SmallVector<SymExpr, 4> strides(sizes.size());
  SymExpr running = ctx.constant(1);
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = running;
    SymExpr size = sizes[i];
    if (size && size.isConstant() && size.constantValue() == 0)
      size = ctx.constant(1);
    running = size ? running * size : running;
  }
  return strides;
}

bool Type::hasContiguousStrides() const {
  if (!isTensor() || layout_ != Layout::Strided || sizes_.size() != strides_.size())
    return false;
  if (sizes_.empty())
    return true;
  for (SymExpr e : sizes_)
    if (!e)
      return false;
  return llvm::equal(strides_, contiguousStrides(sizes_.front().context(), sizes_));
}

void Type::walkSymExprs(llvm::function_ref<void(SymExpr)> fn) const {
  for (SymExpr e : sizes_)
    fn(e);
  for (SymExpr e : strides_)
    fn(e);
  if (nnz_)
    fn(nnz_);
  if (intValue_)
    fn(intValue_);
  for (const Type& element : elements_)
    element.walkSymExprs(fn);
}

static void printExprList(llvm::raw_ostream& os, llvm::ArrayRef<SymExpr> exprs) {
  os << '[';
  llvm::interleaveComma(exprs, os);
  os << ']';
}

void Type::print(llvm::raw_ostream& os) const {
  switch (kind_) {
  case Kind::None:
    os << "none";
    return;
  case Kind::Int:
    os << "int";
    if (intValue_)
      os << '<' << intValue_ << '>';
    return;
  case Kind::Float:
    os << "float";
    return;
  case Kind::Bool:
    os << "bool";
    return;
  case Kind::Tensor:
    os << "tensor<" << spelling(dtype_) << ", ";
    printExprList(os, sizes_);
    if (layout_ == Layout::SparseCoo) {
      os << ", sparse_coo(" << sparseDim_ << ", " << nnz_;
      if (coalesced_)
        os << ", coalesced";
      os << ')';
    } else if (!hasContiguousStrides()) {
      os << ", ";
      printExprList(os, strides_);
    }
    if (device_ != Device()) {
      os << ", ";
      device_.print(os);
    }
    if (requiresGrad_)
      os << ", requires_grad";
    os << '>';
    return;
  case Kind::Tuple:
  case Kind::List:
    os << (kind_ == Kind::Tuple ? "tuple<" : "list<");
    llvm::interleaveComma(elements_, os);
    os << '>';
    return;
  }
}

std::string Type::str() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  print(os);
  return text;
}

bool operator==(const Type& a, const Type& b) {
  if (a.kind_ != b.kind_)
    return false;
  switch (a.kind_) {
  case Type::Kind::None:
  case Type::Kind::Float:
  case Type::Kind::Bool:
    return true;
  case Type::Kind::Int:
    return a.intValue_ == b.intValue_;
  case Type::Kind::Tensor:
    return a.dtype_ == b.dtype_ && a.device_ == b.device_ && a.requiresGrad_ == b.requiresGrad_ &&
           a.layout_ == b.layout_ && a.sparseDim_ == b.sparseDim_ && a.nnz_ == b.nnz_ &&
           a.coalesced_ == b.coalesced_ && llvm::equal(a.sizes_, b.sizes_) &&
           llvm::equal(a.strides_, b.strides_);
  case Type::Kind::Tuple:
  case Type::Kind::List:
    return a.elements_ == b.elements_;
  }
  llvm_unreachable("unknown type kind");
}

} // namespace dync::ir
