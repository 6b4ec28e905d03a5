//===- TensorCond.cpp - torch.cond on a tensor predicate ------------------===//
#include "frontend/capture/TensorCond.h"

#include "frontend/capture/BuiltinContext.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/OperatorCalls.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/capture/SubgraphCapture.h"
#include "frontend/capture/ValueTrees.h"
#include "frontend/embedding/PyStrings.h"
#include "ir/ControlFlow.h"
#include "ir/OpTraits.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

namespace dync::capture {

using python::PyRef;

namespace {

constexpr llvm::StringLiteral kBranchEffects =
    "a branch runs only when the graph picks it, so it may change nothing that exists before it "
    "(side effects in torch.cond branches are not supported)";

/// Fails unless the two branches return one structure, with tensors of one
/// type (but for requires_grad, checked later) and equal constants.
llvm::Error checkSameResults(const CapturedSubgraph& onTrue, const CapturedSubgraph& onFalse) {
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
std::vector<ir::Type> resultTypes(const CapturedSubgraph& branch) {
  std::optional<ir::Type> tuple = ir::subgraphResultType(*branch.graph);
  if (!tuple)
    return {};
  return std::vector<ir::Type>(tuple->elements().begin(), tuple->elements().end());
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
  std::string name = freshSubgraphBase(*module, graph.name(), "cond", {"true", "false"});
  llvm::Expected<CapturedSubgraph> onTrue =
      captureSubgraph(interp, *module, name + ".true", trueFn, *args, "torch.cond's true branch",
                      "torch.cond", "branches", kBranchEffects);
  if (!onTrue)
    return onTrue.takeError();
  llvm::Expected<CapturedSubgraph> onFalse =
      captureSubgraph(interp, *module, name + ".false", falseFn, *args, "torch.cond's false branch",
                      "torch.cond", "branches", kBranchEffects);
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
  arrangeSubgraphInputs(*onTrue->graph, onTrue->outer, used);
  arrangeSubgraphInputs(*onFalse->graph, onFalse->outer, used);

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
    llvm::Expected<ValuePtr> value =
        freshNodeResult(interp, leaf, types[index], ir::ValueRef{cond, index});
    if (!value)
      return value.takeError();
    results.push_back(*value);
  }
  llvm::Expected<bool> enabled = gradEnabled();
  if (!enabled)
    return enabled.takeError();
  if (*enabled) {
    llvm::Expected<std::vector<ValuePtr>> operands = valuesOfRefs(interp, used);
    if (!operands)
      return operands.takeError();
    if (llvm::Error error = linkInputGradients(interp, *operands, results))
      return error;
  }
  size_t position = 0;
  return unflattenTree(onTrue->shape, results, position);
}

} // namespace dync::capture
