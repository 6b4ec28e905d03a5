//===- GuardsKeepApart.cpp - Sources that guards already tell apart -------===//
#include "frontend/capture/GuardsKeepApart.h"

namespace dync::capture {

bool couldBeOneTensor(const ir::Type& a, const ir::Type& b) {
  if (a.dtype() != b.dtype() || a.device() != b.device() || a.requiresGrad() != b.requiresGrad() ||
      a.sizes().size() != b.sizes().size())
    return false;
  for (size_t i = 0; i < a.sizes().size(); ++i)
    if (a.sizes()[i].isConstant() && b.sizes()[i].isConstant() &&
        a.sizes()[i].constantValue() != b.sizes()[i].constantValue())
      return false;
  return true;
}

void GuardsKeepApart::note(const ir::Guard& guard) {
  if (!guard.source)
    return;
  if (guard.kind == ir::GuardKind::Type)
    typeNames_[guard.source->str()] = guard.typeModule + ":" + guard.typeQualname;
  else if (guard.kind == ir::GuardKind::Tensor && guard.tensorType)
    tensorTypes_.insert_or_assign(guard.source->str(), *guard.tensorType);
}

bool GuardsKeepApart::apart(const ir::Source& a, const ir::Source& b) const {
  std::string first = a.str(), second = b.str();
  // One class has one name, so objects of differently named types differ.
  auto typeA = typeNames_.find(first), typeB = typeNames_.find(second);
  if (typeA != typeNames_.end() && typeB != typeNames_.end() && typeA->second != typeB->second)
    return true;
  auto tensorA = tensorTypes_.find(first), tensorB = tensorTypes_.find(second);
  return tensorA != tensorTypes_.end() && tensorB != tensorTypes_.end() &&
         !couldBeOneTensor(tensorA->second, tensorB->second);
}

bool GuardsKeepApart::implied(const ir::Guard& guard) const {
  return guard.kind == ir::GuardKind::Distinct && guard.source && guard.other &&
         apart(*guard.source, *guard.other);
}

} // namespace dync::capture
