//===- KernelViews.cpp - Views a kernel reads through ---------------------===//
//
// The offsets below are the overloads' documented meaning: every view here
// but slice and select starts at its operand's first element. Sizes and
// strides come from the node's type, which capture computed.
//
//===----------------------------------------------------------------------===//
#include "ir/kernel/KernelViews.h"

#include "ir/Graph.h"
#include "ir/kernel/ElementOps.h"

#include "llvm/ADT/StringSwitch.h"

namespace dync::ir {
namespace {

enum class ViewKind : uint8_t { None, SameStart, Slice, Select };

ViewKind viewKind(llvm::StringRef overload) {
  return llvm::StringSwitch<ViewKind>(overload)
      .Cases("aten::unsqueeze.default", "aten::squeeze.default", "aten::squeeze.dim",
             "aten::squeeze.dims", "aten::permute.default", ViewKind::SameStart)
      .Cases("aten::expand.default", "aten::view.default", "aten::_unsafe_view.default",
             "aten::alias.default", "aten::t.default", ViewKind::SameStart)
      .Case("aten::transpose.int", ViewKind::SameStart)
      .Case("aten::slice.Tensor", ViewKind::Slice)
      .Case("aten::select.int", ViewKind::Select)
      .Default(ViewKind::None);
}

const Type* typeOf(const ValueRef& ref) {
  return ref.node ? ref.node->resultType(ref.index) : nullptr;
}

/// A literal int argument (positional \p index or keyword \p name), or
/// \p fallback when it is absent or None; nullopt when it is symbolic.
std::optional<int64_t> literalInt(const Node& node, size_t index, llvm::StringRef name,
                                  int64_t fallback) {
  const Argument* arg = nullptr;
  if (index < node.args().size())
    arg = &node.args()[index];
  for (const KeywordArgument& kwarg : node.kwargs())
    if (kwarg.name == name)
      arg = &kwarg.value;
  if (!arg || arg->kind() == Argument::Kind::None)
    return fallback;
  if (arg->kind() != Argument::Kind::Sym || !arg->symValue().isConstant())
    return std::nullopt;
  return arg->symValue().constantValue();
}

/// The first element's offset of a slice or select along one dimension of
/// \p operand: \p position (negative counts from the end, as Python does)
/// times the dimension's stride, clamped to the dimension as slice clamps.
std::optional<SymExpr> offsetAlong(const Node& node, const Type& operand, ViewKind kind) {
  std::optional<int64_t> dim = literalInt(node, 1, "dim", 0);
  std::optional<int64_t> position =
      kind == ViewKind::Slice ? literalInt(node, 2, "start", 0) : literalInt(node, 2, "index", 0);
  int64_t rank = operand.sizes().size();
  if (!dim || !position || *dim < -rank || *dim >= rank)
    return std::nullopt;
  if (*dim < 0)
    *dim += rank;
  SymExpr size = operand.sizes()[*dim];
  SymExpr stride = operand.strides()[*dim];
  if (*position >= 0) {
    // A start past the end leaves an empty slice, which reads nothing.
    return stride * *position;
  }
  if (!size.isConstant())
    return std::nullopt;
  int64_t start = *position + size.constantValue();
  if (start < 0) {
    if (kind == ViewKind::Select)
      return std::nullopt; // out of range: ATen raises
    start = 0;
  }
  return stride * start;
}

} // namespace

std::optional<SymExpr> viewOffset(const Node& node, Context& ctx) {
  if (!node.isCall() || node.args().empty() || !node.args()[0].isValue())
    return std::nullopt;
  ViewKind kind = viewKind(node.op());
  if (kind == ViewKind::None)
    return std::nullopt;
  const Type* operand = typeOf(node.args()[0].valueRef());
  const Type& result = node.type();
  if (!operand || !operand->isTensor() || !result.isTensor() ||
      operand->dtype() != result.dtype() || !isKernelDType(result.dtype()) ||
      result.device().kind != DeviceKind::CPU)
    return std::nullopt;
  if (kind == ViewKind::SameStart)
    return ctx.constant(0);
  return offsetAlong(node, *operand, kind);
}

ViewedBase viewedBase(const ValueRef& ref, Context& ctx) {
  ViewedBase base{ref, ctx.constant(0)};
  while (!base.root.index) {
    std::optional<SymExpr> offset = viewOffset(*base.root.node, ctx);
    if (!offset)
      break;
    base.offset = base.offset + *offset;
    base.root = base.root.node->args()[0].valueRef();
  }
  return base;
}

} // namespace dync::ir
