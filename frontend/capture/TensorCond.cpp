//===- TensorCond.cpp - torch.cond on a tensor predicate ------------------===//
#include "frontend/capture/TensorCond.h"

#include "frontend/capture/BuiltinContext.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/OperatorCalls.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/capture/ValueTrees.h"
#include "frontend/embedding/PyStrings.h"
#include "ir/ControlFlow.h"
#include "ir/OpTraits.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

namespace dync::capture {

using python::PyRef;

namespace {

/// One branch as captured: its subgraph, the pytree it returned, and the
/// value of the enclosing graph each input of the subgraph stands for.
struct Branch {
  ir::Graph* graph = nullptr;
  TreeShape shape;
  std::vector<ValuePtr> leaves;
  std::vector<ir::ValueRef> outer;
};

/// `<graph>.cond<N>`, N the first number for which neither subgraph name
/// is taken in \p module.
std::string condName(const ir::Module& module, llvm::StringRef graph) {
  for (unsigned n = 0;; ++n) {
    std::string base = graph.str() + ".cond" + std::to_string(n);
    if (!module.hasName(base + ".true") && !module.hasName(base + ".false"))
      return base;
  }
}

/// ` (at model.py:12:16)` for \p node, when its line is known.
std::string where(const ir::Node& node) { return node.location().suffix(); }

/// Fails when \p branch writes one of its inputs in place, or returns an
/// input or a view of one: torch.cond's branches may neither mutate nor
/// alias their operands.
llvm::Error checkNoInputEffects(const ir::Graph& branch, llvm::StringRef what) {
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
                            "; torch.cond's results may not alias its operands (return a "
                            "clone)");
      continue;
    }
    // A nested cond's results are fresh (its own branches were checked).
    if (!readsInput || ir::isCondCall(node))
      continue;
    const ir::OpTraits* traits = ir::findOpTraits(node.op());
    if (traits && traits->mutatesArgument)
      return captureError(what + " writes one of its operands in place (" + node.op() + ")" +
                          where(node) + "; torch.cond's branches may not mutate their operands");
    if (!traits || traits->returnsAlias)
      ofInputs.insert(&node);
  }
  return llvm::Error::success();
}

/// Calls \p fn on \p args with its calls recorded into the new subgraph
/// \p name of \p module.
llvm::Expected<Branch> captureBranch(BuiltinContext& interp, ir::Module& module,
                                     const std::string& name, const ValuePtr& fn,
                                     std::vector<ValuePtr> args, llvm::StringRef what) {
  oracle::TensorOracle& oracle = interp.oracle();
  Branch branch;
  branch.graph = &module.addSubgraph(name);
  oracle.beginSubgraph(*branch.graph);
  auto fail = [&](llvm::Error error) -> llvm::Expected<Branch> {
    oracle.endSubgraph();
    module.eraseSubgraph(*branch.graph);
    return error;
  };
  llvm::Expected<ValuePtr> result = interp.callWithoutSideEffects(fn, std::move(args), what);
  if (!result)
    return fail(result.takeError());
  llvm::Expected<TreeShape> shape = flattenTree("torch.cond", *result, branch.leaves);
  if (!shape)
    return fail(shape.takeError());
  branch.shape = std::move(*shape);
  std::vector<ir::Argument> returned;
  for (const ValuePtr& leaf : branch.leaves) {
    if (leaf->isTensor()) {
      llvm::Expected<ir::ValueRef> ref = oracle.recordedValueOf(leaf->object.get());
      if (!ref)
        return fail(ref.takeError());
      returned.push_back(ir::Argument::value(ref->node, ref->index));
    } else if (!leaf->isConstant()) {
      return fail(captureError(what + " returns a " + spelling(leaf->kind) +
                               "; torch.cond's branches return tensors and constants"));
    }
  }
  oracle.recordingBuilder().setOutput(ir::Argument::tuple(std::move(returned)));
  branch.outer = oracle.endSubgraph();
  if (llvm::Error error = checkNoInputEffects(*branch.graph, what)) {
    module.eraseSubgraph(*branch.graph);
    return error;
  }
  return branch;
}

/// Gives \p branch's inputs the order of \p want, adding an input for each
/// value it does not use; \p have is the value each input stands for now.
void arrangeInputs(ir::Graph& branch, llvm::ArrayRef<ir::ValueRef> have,
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

/// Fails unless the two branches return one structure, with tensors of one
/// type (but for requires_grad, checked later) and equal constants.
llvm::Error checkSameResults(const Branch& onTrue, const Branch& onFalse) {
  if (!(onTrue.shape == onFalse.shape) || onTrue.leaves.size() != onFalse.leaves.size())
    return captureError("torch.cond's branches return results of different pytree structures; "
                        "both must return the same structure");
  for (size_t i = 0; i < onTrue.leaves.size(); ++i) {
    const ValuePtr& a = onTrue.leaves[i];
    const ValuePtr& b = onFalse.leaves[i];
    if (a->isTensor() != b->isTensor())
      return captureError("torch.cond's branches return a tensor in one branch and a constant in "
                          "the other at result leaf " +
                          llvm::Twine(i));
    if (!a->isTensor()) {
      if (PyObject_RichCompareBool(a->object.get(), b->object.get(), Py_EQ) != 1 ||
          Py_TYPE(a->object.get()) != Py_TYPE(b->object.get())) {
        PyErr_Clear();
        return captureError("torch.cond's branches return different constants at result leaf " +
                            llvm::Twine(i) + " (" + python::strOf(a->object.get()) + " and " +
                            python::strOf(b->object.get()) + ")");
      }
    }
  }
  return llvm::Error::success();
}

/// The tensor types \p branch returns, in order.
std::vector<ir::Type> resultTypes(const Branch& branch) {
  std::optional<ir::Type> tuple = ir::subgraphResultType(*branch.graph);
  if (!tuple)
    return {};
  return std::vector<ir::Type>(tuple->elements().begin(), tuple->elements().end());
}

/// The operands \p refs name, as values (fake tensors).
llvm::Expected<std::vector<ValuePtr>> operandValues(BuiltinContext& interp,
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

/// What eager's cond checks before it runs a branch: operands that are a
/// tuple or list of pytrees of tensors, a predicate of one element.
llvm::Error checkArguments(BuiltinContext& interp, const ValuePtr& pred, const ValuePtr& operands) {
  std::vector<ValuePtr> operandLeaves;
  if (operands->kind == ValueKind::Tuple || operands->kind == ValueKind::List) {
    llvm::Expected<TreeShape> shape = flattenTree("torch.cond", operands, operandLeaves);
    if (!shape)
      return shape.takeError();
  }
  if ((operands->kind != ValueKind::Tuple && operands->kind != ValueKind::List) ||
      !llvm::all_of(operandLeaves, [](const ValuePtr& leaf) { return leaf->isTensor(); }))
    return raiseBuiltin(PyExc_RuntimeError,
                        "Expect operands to be a tuple of possibly nested dict/list/tuple that "
                        "only consists of tensor leaves",
                        "the program raises");
  llvm::Expected<ValuePtr> numelMethod = interp.getAttr(pred, "numel");
  if (!numelMethod)
    return numelMethod.takeError();
  llvm::Expected<ValuePtr> numel = interp.call(*numelMethod, {});
  if (!numel)
    return numel.takeError();
  if (!(*numel)->isConstant() || !PyLong_Check((*numel)->object.get()))
    return captureError("torch.cond on a predicate tensor whose number of elements is symbolic "
                        "is not supported; it must have one element");
  if (PyLong_AsLongLong((*numel)->object.get()) != 1)
    return raiseBuiltin(PyExc_RuntimeError, "Expected pred to be bool or single-element tensor",
                        "the program raises");
  return llvm::Error::success();
}

} // namespace

llvm::Expected<ValuePtr> callTensorCond(BuiltinContext& interp, const ValuePtr& pred,
                                        const ValuePtr& trueFn, const ValuePtr& falseFn,
                                        const ValuePtr& operands) {
  if (llvm::Error error = checkArguments(interp, pred, operands))
    return error;
  llvm::Expected<std::vector<ValuePtr>> args = interp.unpack(operands);
  if (!args)
    return args.takeError();

  oracle::TensorOracle& oracle = interp.oracle();
  llvm::Expected<ir::ValueRef> predRef = oracle.recordedValueOf(pred->object.get());
  if (!predRef)
    return predRef.takeError();
  ir::Graph& graph = oracle.recordingBuilder().graph();
  ir::Module* module = graph.module();
  if (!module)
    return captureError("torch.cond on a tensor predicate needs a graph of a module to capture "
                        "its branches into");
  std::string name = condName(*module, graph.name());
  llvm::Expected<Branch> onTrue =
      captureBranch(interp, *module, name + ".true", trueFn, *args, "torch.cond's true branch");
  if (!onTrue)
    return onTrue.takeError();
  llvm::Expected<Branch> onFalse =
      captureBranch(interp, *module, name + ".false", falseFn, *args, "torch.cond's false branch");
  if (!onFalse)
    return onFalse.takeError();
  if (llvm::Error error = checkSameResults(*onTrue, *onFalse))
    return error;
  std::vector<ir::Type> types = resultTypes(*onTrue);
  std::vector<ir::Type> falseTypes = resultTypes(*onFalse);
  for (auto [i, a, b] : llvm::enumerate(types, falseTypes)) {
    // requires_grad is checked against eager's rule below.
    auto plain = [](const ir::Type& t) {
      return ir::Type::tensor(t.dtype(), t.sizes(), t.strides(), t.device());
    };
    if (plain(a) != plain(b))
      return captureError("torch.cond's branches return tensors of different types as result " +
                          llvm::Twine(i) + ": " + a.str() + " and " + b.str() +
                          "; both must return the same dtype, sizes and strides");
  }

  // Both subgraphs take every value either uses, in one order.
  std::vector<ir::ValueRef> used = onTrue->outer;
  for (const ir::ValueRef& ref : onFalse->outer)
    if (!llvm::is_contained(used, ref))
      used.push_back(ref);
  arrangeInputs(*onTrue->graph, onTrue->outer, used);
  arrangeInputs(*onFalse->graph, onFalse->outer, used);

  ir::Node* truth = oracle.addRecordedCall("aten::is_nonzero.default",
                                           {ir::GraphBuilder::use(predRef->node, predRef->index)},
                                           ir::Type::boolean());
  std::vector<ir::Argument> condArgs{ir::GraphBuilder::use(truth),
                                     ir::Argument::string(name + ".true"),
                                     ir::Argument::string(name + ".false")};
  for (const ir::ValueRef& ref : used)
    condArgs.push_back(ir::Argument::value(ref.node, ref.index));
  ir::Node* cond =
      oracle.addRecordedCall(ir::kCondOperator, std::move(condArgs), ir::Type::tuple(types));

  std::vector<ValuePtr> results;
  unsigned next = 0;
  for (const ValuePtr& leaf : onTrue->leaves) {
    if (!leaf->isTensor()) {
      results.push_back(leaf);
      continue;
    }
    unsigned index = next++;
    llvm::Expected<PyRef> fresh = oracle.freshValue(leaf->object.get(), types[index].requiresGrad(),
                                                    ir::ValueRef{cond, index});
    if (!fresh)
      return fresh.takeError();
    llvm::Expected<ValuePtr> value = interp.wrapFake(fresh->get());
    if (!value)
      return value.takeError();
    results.push_back(*value);
  }
  llvm::Expected<bool> enabled = gradEnabled();
  if (!enabled)
    return enabled.takeError();
  if (*enabled) {
    llvm::Expected<std::vector<ValuePtr>> operands = operandValues(interp, used);
    if (!operands)
      return operands.takeError();
    if (llvm::Error error = linkInputGradients(interp, *operands, results))
      return error;
  }
  size_t position = 0;
  return unflattenTree(onTrue->shape, results, position);
}

} // namespace dync::capture
