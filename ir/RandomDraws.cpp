//===- RandomDraws.cpp - Whether a call draws random numbers --------------===//
#include "ir/RandomDraws.h"

#include "ir/Graph.h"
#include "ir/OpTraits.h"

namespace dync::ir {

namespace {

/// The argument \p node gives for \p sw: by position, else by name; null
/// when it leaves it at the schema's default.
const Argument* givenArgument(const Node& node, const DrawSwitch& sw) {
  if (static_cast<size_t>(sw.position) < node.args().size())
    return &node.args()[static_cast<size_t>(sw.position)];
  for (const KeywordArgument& kwarg : node.kwargs())
    if (kwarg.name == sw.name)
      return &kwarg.value;
  return nullptr;
}

/// Whether \p value, given for \p sw, switches the draws off.
bool switchesOff(const DrawSwitch& sw, const Argument& value) {
  if (sw.training)
    return value.kind() == Argument::Kind::Bool && !value.boolValue();
  if (value.kind() == Argument::Kind::Float)
    return value.floatValue() == 0.0;
  return value.kind() == Argument::Kind::Sym && value.symValue().isConstant() &&
         value.symValue().constantValue() == 0;
}

} // namespace

bool mayDraw(const Node& node) {
  if (!node.isCall())
    return false;
  const OpTraits* traits = findOpTraits(node.op());
  if (!traits || !traits->randomSeeded)
    return false;
  for (const DrawSwitch& sw : traits->drawSwitches) {
    if (sw.position < 0)
      continue;
    const Argument* given = givenArgument(node, sw);
    if (given ? switchesOff(sw, *given) : sw.offByDefault)
      return false;
  }
  return true;
}

} // namespace dync::ir
