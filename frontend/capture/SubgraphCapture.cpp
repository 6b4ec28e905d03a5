//===- SubgraphCapture.cpp - A function's calls captured as a subgraph ----===//
#include "frontend/capture/SubgraphCapture.h"

#include "frontend/capture/BuiltinContext.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/OperatorCalls.h"
#include "frontend/embedding/PyStrings.h"
#include "ir/ControlFlow.h"
#include "ir/OpTraits.h"
#include "ir/WhileLoop.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

namespace dync::capture {

using python::PyRef;

namespace {

/// ` (at model.py:12:16)` for \p node, when its line is known.
std::string where(const ir::Node& node) { return node.location().suffix(); }

/// Fails when \p branch writes one of its inputs in place, or returns an
/// input or a view of one: torch.cond's branches and while_loop's functions
/// may neither mutate nor alias their operands.
llvm::Error checkNoInputEffects(const ir::Graph& branch, llvm::StringRef what, llvm::StringRef op,
                                llvm::StringRef parts) {
  llvm::DenseSet<const ir::Node*> ofInputs;
  for (const ir::Node& node : branch.nodes()) {
    if (node.isInput()) {
      ofInputs.insert(&node);
      continue;
    }
    bool readsInput = false;
    node.forEachUse([&](const ir::ValueRef& ref) { readsInput |= ofInputs.contains(ref.node); });
    if (node.isOutput()) {
      if (readsInput)
        return captureError(what + " returns one of its operands, or a view of one" + where(node) +
                            "; " + op + "'s results may not alias its operands (return a clone)");
      continue;
    }
    // A nested cond's or while_loop's results are fresh (its own subgraphs
    // were checked).
    if (!readsInput || ir::isCondCall(node) || ir::isWhileLoopCall(node))
      continue;
    const ir::OpTraits* traits = ir::findOpTraits(node.op());
    if (traits && traits->mutatesArgument)
      return captureError(what + " writes one of its operands in place (" + node.op() + ")" +
                          where(node) + "; " + op + "'s " + parts +
                          " may not mutate their operands");
    if (!traits || traits->returnsAlias)
      ofInputs.insert(&node);
  }
  return llvm::Error::success();
}

} // namespace

llvm::Expected<CapturedSubgraph> captureSubgraph(BuiltinContext& interp, ir::Module& module,
                                                 const std::string& name, const ValuePtr& fn,
                                                 std::vector<ValuePtr> args, llvm::StringRef what,
                                                 llvm::StringRef op, llvm::StringRef parts,
                                                 llvm::StringRef effectRule,
                                                 const SubgraphAdapters& adapters) {
  oracle::TensorOracle& oracle = interp.oracle();
  CapturedSubgraph branch;
  branch.graph = &module.addSubgraph(name);
  oracle.beginSubgraph(*branch.graph);
  auto fail = [&](llvm::Error error) -> llvm::Expected<CapturedSubgraph> {
    oracle.endSubgraph();
    module.eraseSubgraph(*branch.graph);
    return error;
  };
  if (adapters.arguments) {
    llvm::Expected<std::vector<ValuePtr>> adapted = adapters.arguments(std::move(args));
    if (!adapted)
      return fail(adapted.takeError());
    args = std::move(*adapted);
  }
  llvm::Expected<ValuePtr> result =
      interp.callWithoutSideEffects(fn, std::move(args), what, effectRule);
  if (!result)
    return fail(result.takeError());
  llvm::Expected<TreeShape> shape = flattenTree(op, *result, branch.leaves);
  if (!shape)
    return fail(shape.takeError());
  if (adapters.results)
    if (llvm::Error error = adapters.results(branch.leaves))
      return fail(std::move(error));
  branch.shape = std::move(*shape);
  std::vector<ir::Argument> returned;
  for (const ValuePtr& leaf : branch.leaves) {
    if (leaf->isTensor()) {
      llvm::Expected<ir::ValueRef> ref = oracle.recordedValueOf(leaf->object.get());
      if (!ref)
        return fail(ref.takeError());
      returned.push_back(ir::Argument::value(ref->node, ref->index));
    } else if (!leaf->isConstant()) {
      return fail(captureError(what + " returns a " + spelling(leaf->kind) + "; " + op + "'s " +
                               parts + " return tensors and constants"));
    }
  }
  oracle.recordingBuilder().setOutput(ir::Argument::tuple(std::move(returned)));
  branch.outer = oracle.endSubgraph();
  if (llvm::Error error = checkNoInputEffects(*branch.graph, what, op, parts)) {
    module.eraseSubgraph(*branch.graph);
    return error;
  }
  return branch;
}

void arrangeSubgraphInputs(ir::Graph& branch, llvm::ArrayRef<ir::ValueRef> have,
                           llvm::ArrayRef<ir::ValueRef> want) {
  std::vector<ir::Node*> inputs;
  for (ir::Node& input : branch.nodes())
    if (input.isInput())
      inputs.push_back(&input);
  llvm::StringSet<> names;
  for (const ir::Node& node : branch.nodes())
    names.insert(node.name());
  std::vector<std::unique_ptr<ir::Node>> ordered;
  for (const ir::ValueRef& ref : want) {
    const auto* found = llvm::find(have, ref);
    if (found != have.end()) {
      ir::Node* input = inputs[found - have.begin()];
      branch.nodes().remove(input);
      ordered.emplace_back(input);
      continue;
    }
    std::string name = ref.node->name();
    for (unsigned n = 1; names.contains(name); ++n)
      name = ref.node->name() + "_" + std::to_string(n);
    names.insert(name);
    ordered.push_back(ir::Node::input(name, *ref.node->resultType(ref.index), ""));
  }
  auto first = branch.nodes().begin();
  for (std::unique_ptr<ir::Node>& input : ordered)
    branch.insert(first, std::move(input));
}

std::string freshSubgraphBase(const ir::Module& module, llvm::StringRef graph, llvm::StringRef kind,
                              llvm::ArrayRef<llvm::StringRef> parts) {
  for (unsigned n = 0;; ++n) {
    std::string base = (graph + "." + kind + llvm::Twine(n)).str();
    if (llvm::none_of(
            parts, [&](llvm::StringRef part) { return module.hasName((base + "." + part).str()); }))
      return base;
  }
}

llvm::Expected<ValuePtr> freshNodeResult(BuiltinContext& interp, const ValuePtr& leaf,
                                         const ir::Type& type, ir::ValueRef ref) {
  llvm::Expected<PyRef> fresh =
      interp.oracle().freshValue(leaf->object.get(), type.requiresGrad(), ref);
  if (!fresh)
    return fresh.takeError();
  return interp.wrapFake(fresh->get());
}

llvm::Expected<std::vector<ValuePtr>> valuesOfRefs(BuiltinContext& interp,
                                                   llvm::ArrayRef<ir::ValueRef> refs) {
  std::vector<ValuePtr> values;
  for (const ir::ValueRef& ref : refs) {
    llvm::Expected<PyRef> fake = interp.oracle().fakeOf(ref);
    if (!fake)
      return fake.takeError();
    llvm::Expected<ValuePtr> value = interp.wrapFake(fake->get());
    if (!value)
      return value.takeError();
    values.push_back(*value);
  }
  return values;
}

} // namespace dync::capture
