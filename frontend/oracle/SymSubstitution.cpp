//===- SymSubstitution.cpp - Replacing symbols in a graph -----------------===//
#include "frontend/oracle/SymSubstitution.h"

#include "llvm/ADT/SmallVector.h"

namespace dync::oracle {

using ir::SymExpr;
using ir::SymKind;

SymExpr SymSubstitution::apply(SymExpr expr) {
  if (!expr || expr.isConstant())
    return expr;
  if (expr.isSymbol()) {
    auto it = replacements_.find(expr.symbolName());
    return it == replacements_.end() ? expr : it->second;
  }
  if (auto it = done_.find(expr); it != done_.end())
    return it->second;
  llvm::SmallVector<SymExpr, 4> operands;
  for (SymExpr operand : expr.operands())
    operands.push_back(apply(operand));
  // Rebuilding through the canonicalizing operators keeps the result in
  // canonical form, which substitution may have broken (s1 -> s0 in
  // s0 + s1 gives 2*s0).
  SymExpr result;
  switch (expr.kind()) {
  case SymKind::Const:
  case SymKind::Symbol:
    result = expr;
    break;
  case SymKind::Add:
    result = operands.front();
    for (SymExpr operand : llvm::ArrayRef(operands).drop_front())
      result = result + operand;
    break;
  case SymKind::Mul:
    result = operands.front();
    for (SymExpr operand : llvm::ArrayRef(operands).drop_front())
      result = result * operand;
    break;
  case SymKind::FloorDiv:
    result = operands[0].floorDiv(operands[1]);
    break;
  case SymKind::Mod:
    result = operands[0].mod(operands[1]);
    break;
  case SymKind::Min:
    result = SymExpr::min(operands);
    break;
  case SymKind::Max:
    result = SymExpr::max(operands);
    break;
  }
  done_[expr] = result;
  return result;
}

ir::Type SymSubstitution::apply(const ir::Type& type) {
  switch (type.kind()) {
  case ir::Type::Kind::Tensor: {
    llvm::SmallVector<SymExpr, 4> sizes, strides;
    for (SymExpr size : type.sizes())
      sizes.push_back(apply(size));
    for (SymExpr stride : type.strides())
      strides.push_back(apply(stride));
    if (type.isSparse())
      return ir::Type::sparseCooTensor(type.dtype(), sizes, type.sparseDim(), apply(type.nnz()),
                                       type.coalesced(), type.device(), type.requiresGrad());
    return ir::Type::tensor(type.dtype(), sizes, strides, type.device(), type.requiresGrad());
  }
  case ir::Type::Kind::Int:
    return ir::Type::integer(apply(type.intValue()));
  case ir::Type::Kind::Tuple:
  case ir::Type::Kind::List: {
    std::vector<ir::Type> elements;
    for (const ir::Type& element : type.elements())
      elements.push_back(apply(element));
    return type.kind() == ir::Type::Kind::Tuple ? ir::Type::tuple(elements)
                                                : ir::Type::list(elements);
  }
  default:
    return type;
  }
}

void SymSubstitution::apply(ir::Argument& argument) {
  if (argument.kind() == ir::Argument::Kind::Sym)
    argument = ir::Argument::sym(apply(argument.symValue()));
  else if (argument.isContainer())
    for (ir::Argument& element : argument.elements())
      apply(element);
}

void SymSubstitution::apply(ir::Graph& graph) {
  if (empty())
    return;
  for (ir::Node& node : graph.nodes()) {
    node.setType(apply(node.type()));
    for (ir::Argument& argument : node.args())
      apply(argument);
    for (ir::KeywordArgument& keyword : node.kwargs())
      apply(keyword.value);
  }
  for (ir::Relation& relation : graph.relations()) {
    relation.lhs = apply(relation.lhs);
    relation.rhs = apply(relation.rhs);
    for (ir::Comparison& alternative : relation.alternatives) {
      alternative.lhs = apply(alternative.lhs);
      alternative.rhs = apply(alternative.rhs);
    }
  }
}

} // namespace dync::oracle
