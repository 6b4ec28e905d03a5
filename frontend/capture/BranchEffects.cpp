//===- BranchEffects.cpp - Branches that must change nothing --------------===//
//
// A branch of torch.cond on a tensor predicate is captured into a subgraph
// that runs only when the graph picks it, yet capture runs both (and the
// functions of a while_loop on one run as many times as the graph says,
// capture running each once). Whatever a
// branch changes outside itself (an attribute or global assigned, a list,
// dict, object or cell made before it changed in place) would then happen
// whichever branch runs, or be seen by the other branch and the code after
// it, so it is refused: the branch is called with the interpreter's tables
// and the contents of every value the program can reach noted before, and
// compared after.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Interpreter.h"
#include "frontend/capture/Recorder.h"

namespace dync::capture {

namespace {

/// `at FILE:LINE` when \p where is known.
std::string at(const std::string& where) { return where.empty() ? "" : " at " + where; }

} // namespace

llvm::Expected<ValuePtr> Interpreter::callWithoutSideEffects(const ValuePtr& callee,
                                                             std::vector<ValuePtr> args,
                                                             const llvm::Twine& what,
                                                             const llvm::Twine& why) {
  std::vector<ValuePtr> roots;
  addValueRoots(roots);
  ValueSnapshot before = ValueSnapshot::take(roots);
  std::vector<ValuePtr> attrValues, globalValues;
  for (const RealAttrSetting& setting : realAttrSettings_)
    attrValues.push_back(setting.value);
  for (const GlobalStore& store : globalStores_)
    globalValues.push_back(store.value);
  size_t containers = mutatedContainers_.size();
  size_t worldCalls = worldCalls_.size();
  std::vector<RegisteredHook> hooksBefore = registeredHooks_;
  size_t contextVars = contextVarSettings_.size() + contextVarTokens_.size();

  llvm::Expected<ValuePtr> result = call(callee, std::move(args));
  if (!result)
    return result.takeError();

  std::string refusal = what.str() + " ";
  std::string reason = why.str();
  auto refuse = [&](const llvm::Twine& change) {
    return captureError(refusal + change + "; " + reason);
  };
  for (size_t i = 0; i < realAttrSettings_.size(); ++i)
    if (i >= attrValues.size() || realAttrSettings_[i].value != attrValues[i])
      return refuse("assigns attribute '" + realAttrSettings_[i].name + "' of " +
                    realAttrSettings_[i].owner + at(realAttrSettings_[i].where));
  for (size_t i = 0; i < globalStores_.size(); ++i)
    if (i >= globalValues.size() || globalStores_[i].value != globalValues[i])
      return refuse("assigns global '" + globalStores_[i].name + "'" + at(globalStores_[i].where));
  if (mutatedContainers_.size() != containers)
    return refuse("changes " + mutatedContainers_.back().value->source->str() + " in place" +
                  at(mutatedContainers_.back().where));
  for (size_t i = 0; i < registeredHooks_.size(); ++i)
    if (i >= hooksBefore.size() || registeredHooks_[i].removed != hooksBefore[i].removed)
      return refuse(llvm::Twine(i >= hooksBefore.size() ? "registers" : "removes") + " a hook on " +
                    registeredHooks_[i].moduleName);
  if (worldCalls_.size() != worldCalls)
    return refuse("calls " + worldCalls_.back().target +
                  (worldCalls_.back().method.empty() ? "" : "." + worldCalls_.back().method) +
                  at(worldCalls_.back().where));
  if (contextVarSettings_.size() + contextVarTokens_.size() != contextVars)
    return refuse("sets a context variable");
  if (ValuePtr changed = before.firstChanged())
    return refuse("changes " +
                  (changed->source ? changed->source->str()
                                   : "a " + spelling(changed->kind).str() + " made before it") +
                  " in place");
  return result;
}

} // namespace dync::capture
