//===- TensorWhileLoop.cpp - torch's while_loop on a tensor predicate -----===//
#include "frontend/capture/TensorWhileLoop.h"

#include "frontend/capture/BuiltinContext.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/OperatorCalls.h"
#include "frontend/capture/SubgraphCapture.h"
#include "frontend/embedding/PyStrings.h"
#include "frontend/embedding/PythonError.h"
#include "ir/ControlFlow.h"
#include "ir/WhileLoop.h"

namespace dync::capture {

using python::PyRef;

namespace {

constexpr llvm::StringLiteral kOperator = "torch while_loop";
constexpr llvm::StringLiteral kParts = "functions";
constexpr llvm::StringLiteral kEffects =
    "the function runs as many times as the graph's loop does (known only when it runs), so it "
    "may change nothing that exists before it (side effects in the functions of a torch "
    "while_loop on a tensor predicate are not supported)";

/// The tensor types \p subgraph returns, in order.
std::vector<ir::Type> resultTypes(const ir::Graph& subgraph) {
  std::optional<ir::Type> tuple = ir::subgraphResultType(subgraph);
  if (!tuple)
    return {};
  return std::vector<ir::Type>(tuple->elements().begin(), tuple->elements().end());
}

ir::Type plain(const ir::Type& t) {
  return ir::Type::tensor(t.dtype(), t.sizes(), t.strides(), t.device());
}

/// Fails unless cond_fn, captured as \p cond, returned one bool tensor of
/// no dimensions, as eager's while_loop requires.
llvm::Error checkCondResult(const CapturedSubgraph& cond) {
  std::vector<ir::Type> types = resultTypes(*cond.graph);
  if (cond.leaves.size() == 1 && cond.shape.kind == TreeShape::Kind::Leaf && types.size() == 1 &&
      types[0].dtype() == ir::DType::Bool && types[0].sizes().empty())
    return llvm::Error::success();
  std::string got = types.size() == 1 && cond.leaves.size() == 1
                        ? "a tensor of type " + plain(types[0]).str()
                        : "a pytree of " + std::to_string(cond.leaves.size()) + " leaves";
  return raiseBuiltin(PyExc_RuntimeError,
                      "cond_fn must return a boolean scalar tensor or a boolean but got " + got,
                      "the program raises");
}

/// Whether \p value is a Python int (not a bool) or a symbolic one.
bool isInt(BuiltinContext& interp, const ValuePtr& value) {
  PyObject* object = value->object.get();
  if (value->kind == ValueKind::SymNum)
    return Py_TYPE(object) == reinterpret_cast<PyTypeObject*>(interp.types().symInt.get());
  return value->isConstant() && object && PyLong_CheckExact(object);
}

/// What \p value is, for messages: its Python type's name when it has one.
std::string kindOf(const ValuePtr& value) {
  if (value->object && (value->isConstant() || value->kind == ValueKind::SymNum))
    return Py_TYPE(value->object.get())->tp_name;
  return spelling(value->kind).str();
}

/// \p n as the 0-dim int64 tensor the graph's loop carries for an int (the
/// oracle's carried_int_tensor, embedded oracle_scalars.py).
llvm::Expected<ValuePtr> intTensor(BuiltinContext& interp, const ValuePtr& n) {
  PyRef module = PyRef::steal(PyImport_ImportModule("dync_oracle_scalars"));
  PyRef make =
      module ? PyRef::steal(PyObject_GetAttrString(module.get(), "carried_int_tensor")) : PyRef();
  if (!make)
    return python::takePythonError("the oracle's carried_int_tensor");
  return interp.callOracle(make.get(), {n}, {});
}

/// Clones the carried values \p leaves, with the value each clone is in the
/// graph. An int is carried as a 0-dim int64 tensor (its position goes to
/// \p ints): the functions get the int back with item(), and the loop's
/// result for it is item() of the last one, a data-dependent int, as
/// torch.export carries an int as an unbacked SymInt.
llvm::Error cloneCarried(BuiltinContext& interp, const std::vector<ValuePtr>& leaves,
                         std::vector<ValuePtr>& clones, std::vector<ir::ValueRef>& refs,
                         std::vector<size_t>& ints) {
  for (auto [i, leaf] : llvm::enumerate(leaves)) {
    ValuePtr carried = leaf;
    if (isInt(interp, leaf)) {
      llvm::Expected<ValuePtr> tensor = intTensor(interp, leaf);
      if (!tensor)
        return tensor.takeError();
      carried = *tensor;
      ints.push_back(i);
    } else if (!leaf->isTensor()) {
      return captureError("torch while_loop whose cond_fn returns a tensor and that carries a " +
                          kindOf(leaf) + " (carried leaf " + llvm::Twine(i) +
                          ") is not supported: it carries tensors and ints; carry it as a "
                          "tensor");
    }
    llvm::Expected<ValuePtr> copy = callMethod(interp, carried, "clone", {});
    if (!copy)
      return copy.takeError();
    // The functions see each carried value as any iteration may pass it, not
    // as the first: the fake tensor forgets the value torch propagates for a
    // small constant (FakeTensor.constant), which item() or a branch would
    // otherwise read.
    if (PyObject_SetAttrString((*copy)->object.get(), "constant", Py_None) < 0)
      return python::takePythonError("forgetting a carried tensor's constant value");
    llvm::Expected<ir::ValueRef> ref = interp.oracle().recordedValueOf((*copy)->object.get());
    if (!ref)
      return ref.takeError();
    clones.push_back(*copy);
    refs.push_back(*ref);
  }
  return llvm::Error::success();
}

/// What cond_fn and body_fn are called with, inside their subgraph: the
/// carried values, an int as item() of its tensor.
SubgraphAdapters carriedArguments(BuiltinContext& interp, const TreeShape& shape,
                                  const std::vector<size_t>& ints) {
  SubgraphAdapters adapters;
  adapters.arguments = [&interp, &shape, &ints](
                           std::vector<ValuePtr> leaves) -> llvm::Expected<std::vector<ValuePtr>> {
    for (size_t i : ints) {
      llvm::Expected<ValuePtr> n = callMethod(interp, leaves[i], "item", {});
      if (!n)
        return n.takeError();
      leaves[i] = *n;
    }
    size_t next = 0;
    return interp.unpack(unflattenTree(shape, leaves, next));
  };
  return adapters;
}

/// body_fn's ints, where the carried values have them, as the tensors the
/// loop carries; anything else there is refused.
llvm::Error intsAsTensors(BuiltinContext& interp, const std::vector<size_t>& ints,
                          std::vector<ValuePtr>& leaves) {
  for (size_t i : ints) {
    if (i >= leaves.size())
      return llvm::Error::success(); // the structure check says what is wrong
    if (!isInt(interp, leaves[i]))
      return captureError("torch while_loop's body_fn returns a " + kindOf(leaves[i]) +
                          " for carried leaf " + llvm::Twine(i) +
                          ", which is an int; return an int there");
    llvm::Expected<ValuePtr> tensor = intTensor(interp, leaves[i]);
    if (!tensor)
      return tensor.takeError();
    leaves[i] = *tensor;
  }
  return llvm::Error::success();
}

/// Fails unless body_fn, captured as \p body, returned the carried values'
/// structure \p shape with each tensor of its carried value's type (strides
/// included: the loop passes one iteration's results to the next).
llvm::Error checkBody(BuiltinContext& interp, const CapturedSubgraph& body, const TreeShape& shape,
                      const std::vector<ValuePtr>& clones, llvm::ArrayRef<ir::ValueRef> refs) {
  if (body.shape.kind != TreeShape::Kind::Tuple && body.shape.kind != TreeShape::Kind::List)
    return raiseBuiltin(PyExc_RuntimeError,
                        "torch while_loop's body_fn must return a tuple of the carried values",
                        "the program raises");
  TreeShape outShape = body.shape;
  outShape.kind = TreeShape::Kind::Tuple;
  if (llvm::Error error = checkWhileBodyResult(interp, shape, clones, outShape, body.leaves))
    return error;
  std::vector<ir::Type> types = resultTypes(*body.graph);
  for (auto [k, type, ref] : llvm::enumerate(types, refs)) {
    const ir::Type& carried = *ref.node->resultType(ref.index);
    if (plain(type) != plain(carried))
      return captureError("torch while_loop's body_fn returns " + plain(type).str() +
                          " for carried value " + llvm::Twine(k) + ", which is " +
                          plain(carried).str() +
                          "; the loop passes each iteration's results to the next, so they must "
                          "have the carried values' strides too (return .contiguous() of it, or "
                          "carry it in the layout body_fn returns)");
  }
  return llvm::Error::success();
}

/// With grad mode on, fails when one of \p operands requires grad: eager's
/// while_loop then runs as an autograd Function of its own, whose
/// gradients differ from those of the loop's calls (for an additional
/// input after two iterations, for every input after none), so a graph
/// cannot give eager's. Under `-o`, the variant for grad mode on is then
/// left out and such calls run the original code.
llvm::Error checkNoGradient(BuiltinContext& interp, llvm::ArrayRef<ir::ValueRef> operands) {
  llvm::Expected<bool> enabled = gradEnabled();
  if (!enabled || !*enabled)
    return enabled ? llvm::Error::success() : enabled.takeError();
  for (const ir::ValueRef& ref : operands) {
    llvm::Expected<PyRef> fake = interp.oracle().fakeOf(ref);
    if (!fake)
      return fake.takeError();
    PyRef flag = PyRef::steal(PyObject_GetAttrString(fake->get(), "requires_grad"));
    int requiresGrad = flag ? PyObject_IsTrue(flag.get()) : -1;
    if (requiresGrad < 0)
      return python::takePythonError("reading requires_grad of a while_loop operand");
    if (!requiresGrad)
      continue;
    std::string what = ref.node->isInput() && !ref.node->source().empty()
                           ? ref.node->source()
                           : "a tensor computed from one that does";
    return captureError("torch while_loop on a tensor predicate with grad mode on and a tensor "
                        "that requires grad (" +
                        what +
                        ") is not supported: eager runs it as an autograd Function whose "
                        "gradients the graph's loop does not reproduce; call it under "
                        "torch.no_grad() or with tensors that do not require grad");
  }
  return llvm::Error::success();
}

/// The results standing for \p loop's: fresh fake tensors of the body's
/// result types.
llvm::Expected<std::vector<ValuePtr>> loopResults(BuiltinContext& interp, ir::Node* loop,
                                                  const CapturedSubgraph& body) {
  std::vector<ir::Type> types = resultTypes(*body.graph);
  std::vector<ValuePtr> results;
  for (auto [k, leaf] : llvm::enumerate(body.leaves)) {
    llvm::Expected<ValuePtr> value =
        freshNodeResult(interp, leaf, types[k], ir::ValueRef{loop, unsigned(k)});
    if (!value)
      return value.takeError();
    results.push_back(*value);
  }
  return results;
}

} // namespace

llvm::Expected<ValuePtr> callTensorWhileLoop(BuiltinContext& interp, const ValuePtr& condFn,
                                             const ValuePtr& bodyFn, const TreeShape& shape,
                                             const std::vector<ValuePtr>& leaves) {
  std::vector<ValuePtr> clones;
  std::vector<ir::ValueRef> carriedRefs;
  std::vector<size_t> ints;
  if (llvm::Error error = cloneCarried(interp, leaves, clones, carriedRefs, ints))
    return error;
  oracle::TensorOracle& oracle = interp.oracle();
  ir::Graph& graph = oracle.recordingBuilder().graph();
  ir::Module* module = graph.module();
  if (!module)
    return captureError("torch while_loop on a tensor predicate needs a graph of a module to "
                        "capture its functions into");
  SubgraphAdapters adapters = carriedArguments(interp, shape, ints);
  std::string name = freshSubgraphBase(*module, graph.name(), "while", {"cond", "body"});
  llvm::Expected<CapturedSubgraph> cond =
      captureSubgraph(interp, *module, name + ".cond", condFn, clones, "torch while_loop's cond_fn",
                      kOperator, kParts, kEffects, adapters);
  if (!cond)
    return cond.takeError();
  if (llvm::Error error = checkCondResult(*cond)) {
    module->eraseSubgraph(*cond->graph);
    return error;
  }
  adapters.results = [&interp, &ints](std::vector<ValuePtr>& results) {
    return intsAsTensors(interp, ints, results);
  };
  llvm::Expected<CapturedSubgraph> body =
      captureSubgraph(interp, *module, name + ".body", bodyFn, clones, "torch while_loop's body_fn",
                      kOperator, kParts, kEffects, adapters);
  if (!body) {
    module->eraseSubgraph(*cond->graph);
    return body.takeError();
  }
  TreeShape topTuple = shape;
  topTuple.kind = TreeShape::Kind::Tuple;
  if (llvm::Error error = checkBody(interp, *body, topTuple, clones, carriedRefs)) {
    module->eraseSubgraph(*cond->graph);
    module->eraseSubgraph(*body->graph);
    return error;
  }

  // Both subgraphs take the carried values, then every other value either
  // uses, in one order.
  std::vector<ir::ValueRef> operands = carriedRefs;
  std::vector<ir::Argument> carriedArgs, additionalArgs;
  for (const ir::ValueRef& ref : carriedRefs)
    carriedArgs.push_back(ir::Argument::value(ref.node, ref.index));
  for (const std::vector<ir::ValueRef>* used : {&cond->outer, &body->outer})
    for (const ir::ValueRef& ref : *used)
      if (!llvm::is_contained(operands, ref)) {
        operands.push_back(ref);
        additionalArgs.push_back(ir::Argument::value(ref.node, ref.index));
      }
  if (llvm::Error error = checkNoGradient(interp, operands)) {
    module->eraseSubgraph(*cond->graph);
    module->eraseSubgraph(*body->graph);
    return error;
  }
  arrangeSubgraphInputs(*cond->graph, cond->outer, operands);
  arrangeSubgraphInputs(*body->graph, body->outer, operands);

  ir::Node* loop = oracle.addRecordedCall(
      ir::kWhileLoopOperator,
      {ir::Argument::string(name + ".cond"), ir::Argument::string(name + ".body"),
       ir::Argument::list(std::move(carriedArgs)), ir::Argument::list(std::move(additionalArgs))},
      ir::Type::tuple(resultTypes(*body->graph)));
  llvm::Expected<std::vector<ValuePtr>> results = loopResults(interp, loop, *body);
  if (!results)
    return results.takeError();
  // A carried int leaves the loop as item() of its tensor.
  for (size_t i : ints) {
    llvm::Expected<ValuePtr> n = callMethod(interp, (*results)[i], "item", {});
    if (!n)
      return n.takeError();
    (*results)[i] = *n;
  }
  size_t next = 0;
  return unflattenTree(topTuple, *results, next);
}

} // namespace dync::capture
