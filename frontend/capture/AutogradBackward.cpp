//===- AutogradBackward.cpp - autograd.Function.apply that records autograd ===//
//
// With grad mode on and an input that requires grad, eager's apply runs
// forward with grad mode off and gives the tensors it returns a grad_fn
// whose backward is the Function's own. The graph does the same in three
// parts:
//
// - forward is inlined over its inputs detached (`aten::detach`), so its
//   ATen calls record no autograd when the graph runs with grad mode on,
//   as apply's forward records none;
// - backward(ctx, *grads) is run symbolically right after, with grad mode
//   off as the engine runs it, over the ctx forward filled and one fake
//   gradient per output; the nodes it made are moved out of the entry
//   graph into a backward graph of the module, whose inputs are the entry
//   graph's tensors it read (saved tensors, tensors set on ctx) and the
//   gradients;
// - one `dync::autograd_function.apply` node (ir/AutogradFunction.h) makes
//   the outputs the runtime's autograd node gives history to; the program
//   goes on with fakes bound to its results.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/AutogradFunctions.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Interpreter.h"
#include "frontend/capture/PythonHelpers.h"
#include "ir/AutogradFunction.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace dync::capture {

using python::PyRef;

namespace {

/// `tensor.method()` of a fake tensor, as a bool; false if it fails.
bool tensorPredicate(const ValuePtr& tensor, const char* method) {
  PyRef result = PyRef::steal(PyObject_CallMethod(tensor->object.get(), method, nullptr));
  if (!result)
    PyErr_Clear();
  return result && result.get() == Py_True;
}

/// Whether \p graph's nodes mention \p symbol.
bool mentions(const ir::Graph& graph, ir::SymExpr symbol) {
  bool found = false;
  ir::forEachMentionedSymbol(graph, [&](ir::SymExpr s) { found |= s == symbol; });
  return found;
}

/// An attribute forward may have set on ctx, or null when it did not.
ValuePtr contextAttribute(llvm::function_ref<llvm::Expected<ValuePtr>()> read) {
  llvm::Expected<ValuePtr> value = read();
  if (!value) {
    llvm::consumeError(value.takeError());
    return nullptr;
  }
  return *value;
}

/// Rewrites every value \p arg uses with \p remap.
void remapArgument(ir::Argument& arg, llvm::function_ref<ir::ValueRef(ir::ValueRef)> remap) {
  if (arg.isValue()) {
    arg.valueRef() = remap(arg.valueRef());
    return;
  }
  if (arg.isContainer())
    for (ir::Argument& element : arg.elements())
      remapArgument(element, remap);
}

} // namespace

namespace {

/// Moves the calls backward made (those after \p marker) out of \p entry
/// into \p backward, whose inputs so far are the gradients: entry values
/// the calls read become its first inputs (\p saved, in order of first
/// use), and \p returned (one value per tensor input, a tensor or None) its
/// return; the symbolic sizes it needs that none of its tensors carries
/// become its last inputs, ints the node passes (\p sizes).
llvm::Error outlineBackward(const std::string& name, ir::Graph& entry, ir::Node* marker,
                            llvm::ArrayRef<ValuePtr> returned, oracle::TensorOracle& oracle,
                            ir::Graph& backward, std::vector<ir::ValueRef>& saved,
                            std::vector<ir::SymExpr>& sizes) {
  auto begin = marker ? std::next(marker->getIterator()) : entry.nodes().begin();
  std::vector<ir::Node*> moved;
  llvm::DenseSet<const ir::Node*> inside;
  for (auto it = begin; it != entry.nodes().end(); ++it)
    if (it->isCall()) {
      moved.push_back(&*it);
      inside.insert(&*it);
    }
  std::vector<ir::Node*> gradInputs;
  for (ir::Node& input : backward.nodes())
    if (input.isInput()) {
      gradInputs.push_back(&input);
      inside.insert(&input);
    }

  // What backward returns, as graph values.
  std::vector<std::optional<ir::ValueRef>> results;
  for (const ValuePtr& value : returned) {
    if (!value->isTensor()) {
      results.push_back(std::nullopt);
      continue;
    }
    std::optional<ir::ValueRef> ref = oracle.valueOf(value->object.get());
    if (!ref)
      return captureError(name + ".backward returned a tensor that is no value of the graph");
    results.push_back(ref);
  }

  // Entry values backward reads are its saved inputs.
  auto external = [&](const ir::ValueRef& ref) { return !inside.count(ref.node); };
  auto noteSaved = [&](const ir::ValueRef& ref) {
    if (external(ref) && llvm::find(saved, ref) == saved.end())
      saved.push_back(ref);
  };
  for (ir::Node* node : moved)
    node->forEachUse(noteSaved);
  for (const std::optional<ir::ValueRef>& ref : results)
    if (ref)
      noteSaved(*ref);

  std::vector<ir::Node*> savedInputs;
  auto firstGrad = gradInputs.empty() ? backward.nodes().end() : gradInputs.front()->getIterator();
  for (auto [i, ref] : llvm::enumerate(saved)) {
    const ir::Type& type = *ref.node->resultType(ref.index);
    savedInputs.push_back(
        backward.insert(firstGrad, ir::Node::input("saved" + std::to_string(i), type, "")));
  }

  auto remap = [&](ir::ValueRef ref) -> ir::ValueRef {
    if (!external(ref))
      return ref;
    return ir::ValueRef{savedInputs[llvm::find(saved, ref) - saved.begin()], std::nullopt};
  };
  for (ir::Node* node : moved) {
    entry.nodes().remove(node);
    for (ir::Argument& arg : node->args())
      remapArgument(arg, remap);
    for (ir::KeywordArgument& kwarg : node->kwargs())
      remapArgument(kwarg.value, remap);
    backward.append(std::unique_ptr<ir::Node>(node));
  }

  std::vector<ir::Argument> items;
  for (const std::optional<ir::ValueRef>& ref : results)
    if (!ref)
      items.push_back(ir::Argument::none());
    else {
      ir::ValueRef to = remap(*ref);
      items.push_back(ir::Argument::value(to.node, to.index));
    }
  backward.append(ir::Node::output(ir::Argument::tuple(std::move(items))));
  // The symbolic sizes backward uses that none of its tensors has as a
  // dimension (a batch size forward kept on ctx) are passed as ints, after
  // the gradients: the values they had when forward ran, as eager's ctx
  // holds them. One that only backward's calls compute (from tensor data)
  // has no value when forward runs.
  auto body = llvm::find_if(backward.nodes(), [](const ir::Node& n) { return !n.isInput(); });
  for (ir::SymExpr symbol : ir::unboundSymbols(backward)) {
    if (!mentions(entry, symbol))
      return captureError(name + ".backward computes the size " + symbol.symbolName().str() +
                          " from tensor data, which a backward graph does not support yet");
    backward.insert(body, ir::Node::input("size" + std::to_string(sizes.size()),
                                          ir::Type::integer(symbol), ""));
    sizes.push_back(symbol);
  }
  return llvm::Error::success();
}

} // namespace

llvm::Expected<ValuePtr> Interpreter::unboundFake(const ValuePtr& like, bool requiresGrad) {
  llvm::Expected<PyRef> emptyLike = importObject("torch.empty_like");
  if (!emptyLike)
    return emptyLike.takeError();
  ir::Graph& graph = oracle_.builder().graph();
  ir::Node* last = graph.nodes().empty() ? nullptr : &graph.nodes().back();
  llvm::Expected<ValuePtr> fake =
      callOracle(emptyLike->get(), {like}, {{"requires_grad", makeBool(requiresGrad)}});
  // What empty_like recorded, nothing reads.
  while (!graph.nodes().empty() && &graph.nodes().back() != last)
    graph.erase(&graph.nodes().back());
  // A leaf on fakes, where the node's result has a history: marked so that
  // torch.autograd.grad on fakes refuses to stop there
  // (dync_oracle_backward).
  if (fake && requiresGrad &&
      PyObject_SetAttrString((*fake)->object.get(), "_dync_stand_in", Py_True) != 0)
    return pythonError("marking an autograd.Function's result");
  return fake;
}

llvm::Expected<ValuePtr> Interpreter::applyRecordingAutogradFunction(const ValuePtr& cls,
                                                                     const std::string& name,
                                                                     std::vector<ValuePtr> args) {
  if (llvm::Error refused = recorder_.irreversible("applying an autograd.Function"))
    return refused;
  if (!oracle_.builder().graph().module())
    return captureError(name + ".apply() on tensors that require grad needs a module to hold its "
                               "backward graph");

  // apply's tensor arguments are its inputs; forward sees those that
  // require grad detached, and those in tuples and lists too (which are no
  // inputs: they get no gradient).
  std::vector<ir::ValueRef> inputs;
  std::vector<size_t> inputPositions;
  std::vector<ValuePtr> needsGrad, forwardArgs = args;
  ForwardArguments given;
  for (auto [i, arg] : llvm::enumerate(args)) {
    bool wantsGrad = arg->isTensor() && anyRequiresGrad(arg);
    needsGrad.push_back(makeBool(wantsGrad));
    if (arg->isTensor()) {
      std::optional<ir::ValueRef> ref = oracle_.valueOf(arg->object.get());
      if (!ref)
        return captureError(name + ".apply(): argument " + std::to_string(i) +
                            " is no value of the graph");
      inputs.push_back(*ref);
      inputPositions.push_back(i);
    }
    llvm::Expected<ValuePtr> detached = detachNested(arg, given);
    if (!detached)
      return detached.takeError();
    forwardArgs[i] = *detached;
  }

  llvm::Expected<ValuePtr> ctx = autogradContext(needsGrad);
  if (!ctx)
    return ctx.takeError();
  llvm::Expected<ValuePtr> result = runAutogradForward(cls, name, *ctx, forwardArgs, {});
  if (!result)
    return result.takeError();
  llvm::Expected<ValuePtr> attached =
      attachAutogradFunction(cls, name, *ctx, *result, inputs, inputPositions, args.size(), given);
  if (!attached)
    return attached.takeError();
  // What forward returned nested in tuples keeps no history, as eager's
  // does; a tensor it was given is apply's.
  return restoreNested(name, *attached, given);
}

llvm::Expected<ValuePtr> Interpreter::attachAutogradFunction(
    const ValuePtr& cls, const std::string& name, const ValuePtr& ctx, const ValuePtr& result,
    const std::vector<ir::ValueRef>& inputs, const std::vector<size_t>& inputPositions,
    size_t numArgs, const ForwardArguments& given) {
  ir::GraphBuilder& builder = oracle_.builder();
  ir::Graph& entry = builder.graph();

  // The tensors forward returned (one, or the items of a tuple) are the
  // outputs.
  std::vector<ValuePtr> outputs;
  if (result->isTensor())
    outputs.push_back(result);
  else if (result->kind == ValueKind::Tuple)
    for (const ValuePtr& item : result->items)
      if (item->isTensor())
        outputs.push_back(item);
  if (outputs.empty())
    return result;

  // What forward told ctx.
  auto attribute = [&](llvm::StringRef attr) {
    return contextAttribute([&] { return instanceAttr(ctx, attr); });
  };
  ValuePtr nonDifferentiable = attribute("non_differentiable");
  ValuePtr materialize = attribute("materialize_grads");
  bool materializeGrads =
      !materialize || !materialize->isConstant() || materialize->object.get() != Py_False;
  ir::AutogradFunctionCall call;
  call.function = name;
  call.inputs = inputs;
  call.materializeGrads = materializeGrads;
  llvm::Expected<std::vector<ValuePtr>> dirty = dirtyOutputs(name, ctx, outputs, given, call);
  if (!dirty)
    return dirty.takeError();
  for (const ValuePtr& output : outputs) {
    std::optional<ir::ValueRef> ref = oracle_.valueOf(output->object.get());
    if (!ref)
      return captureError(name + ".forward returned a tensor that is no value of the graph");
    call.outputs.push_back(*ref);
    bool marked = nonDifferentiable && nonDifferentiable->isSequence() &&
                  llvm::any_of(nonDifferentiable->items, [&](const ValuePtr& v) {
                    return v->object.get() == output->object.get();
                  });
    call.differentiable.push_back(!marked && (tensorPredicate(output, "is_floating_point") ||
                                              tensorPredicate(output, "is_complex")));
  }

  // backward(ctx, *grads), with grad mode off as the engine runs it, over
  // one gradient per output: the backward graph's inputs.
  ir::Module& module = *entry.module();
  ir::Graph& backward = module.addBackward(module.freshName(name + ".backward"));
  ir::Node* marker = entry.nodes().empty() ? nullptr : &entry.nodes().back();
  setRealGradMode(false);
  auto runBackward = [&]() -> llvm::Expected<ValuePtr> {
    // One gradient per tensor output; None for what else forward returned.
    std::vector<ValuePtr> grads;
    for (auto [i, output] : llvm::enumerate(outputs)) {
      llvm::Expected<ValuePtr> grad = unboundFake(output, false);
      if (!grad)
        return grad.takeError();
      ir::Node* input = backward.append(
          ir::Node::input("grad" + std::to_string(i),
                          *call.outputs[i].node->resultType(call.outputs[i].index), ""));
      // Autograd never gives an output that is not differentiable a
      // gradient: under ctx.set_materialize_grads(False) backward sees
      // None there (and may test for it), else zeros. The input stays, so
      // the calling convention is one gradient per output.
      if (!materializeGrads && !call.differentiable[i]) {
        grads.push_back(makeNone());
        continue;
      }
      oracle_.bindValue((*grad)->object.get(), ir::ValueRef{input, std::nullopt});
      grads.push_back(*grad);
    }
    std::vector<ValuePtr> backwardArgs{ctx};
    if (result->isTensor())
      backwardArgs.push_back(grads.front());
    else
      for (size_t i = 0, next = 0; i < result->items.size(); ++i)
        backwardArgs.push_back(result->items[i]->isTensor() ? grads[next++] : makeNone());
    llvm::Expected<ValuePtr> function = getAttr(cls, "backward");
    if (!function)
      return function.takeError();
    return this->call(*function, std::move(backwardArgs), {});
  };
  llvm::Expected<ValuePtr> grads = runBackward();
  setRealGradMode(true);
  if (!grads)
    return captureError(name +
                        ".backward could not be captured, so calls that record autograd "
                        "cannot run it: " +
                        llvm::toString(grads.takeError()));

  // One gradient per argument of apply (more only if None), a tensor for
  // a tensor argument or None.
  std::vector<ValuePtr> returned =
      (*grads)->kind == ValueKind::Tuple ? (*grads)->items : std::vector<ValuePtr>{*grads};
  if (returned.size() < numArgs || llvm::any_of(llvm::drop_begin(returned, numArgs),
                                                [](const ValuePtr& v) { return !v->isNone(); }))
    return captureError(name + ".backward returned an incorrect number of gradients (expected " +
                        std::to_string(numArgs) + ", got " + std::to_string(returned.size()) + ")");
  std::vector<ValuePtr> perInput;
  for (size_t i = 0; i < numArgs; ++i) {
    const ValuePtr& grad = returned[i];
    bool tensorArg = llvm::is_contained(inputPositions, i);
    if (!grad->isNone() && !grad->isTensor())
      return captureError(name + ".backward returned a " +
                          (grad->isConstant() ? "number" : "value") + " as gradient " +
                          std::to_string(i) + "; gradients are tensors or None");
    if (grad->isTensor() && !tensorArg)
      return captureError(name +
                          ".backward returned a gradient different than None at "
                          "position " +
                          std::to_string(i + 1) +
                          ", but the corresponding forward input was not a tensor");
    if (tensorArg)
      perInput.push_back(grad);
  }
  for (const ValuePtr& grad : perInput)
    call.gradIndex.push_back(grad->isTensor() ? 0 : -1);
  int64_t leaf = 0;
  for (int64_t& index : call.gradIndex)
    if (index == 0)
      index = leaf++;

  // Everything forward saved is kept (and its version checked) whether
  // backward reads it or not, as eager's saved tensors are.
  if (ValuePtr savedTensors = attribute("saved_tensors");
      savedTensors && savedTensors->isSequence())
    for (const ValuePtr& tensor : savedTensors->items)
      if (tensor->isTensor())
        if (std::optional<ir::ValueRef> ref = oracle_.valueOf(tensor->object.get());
            ref && !llvm::is_contained(call.saved, *ref))
          call.saved.push_back(*ref);
  if (llvm::Error error =
          outlineBackward(name, entry, marker, perInput, oracle_, backward, call.saved, call.sizes))
    return error;
  call.backward = backward.name();

  std::unique_ptr<ir::Node> made = ir::makeAutogradFunctionCall(entry.context(), "", call);
  ir::Node* node = builder.addCall(ir::AutogradFunctionOp, made->args(), {}, made->type());
  return bindAutogradOutputs(node, result, outputs, call.differentiable, *dirty);
}

llvm::Expected<ValuePtr> Interpreter::bindAutogradOutputs(ir::Node* node, const ValuePtr& result,
                                                          const std::vector<ValuePtr>& outputs,
                                                          const std::vector<bool>& differentiable,
                                                          const std::vector<ValuePtr>& dirty) {
  // A fake per result of the node, bound to it: what the program computes
  // next reads it. An input forward modified in place is the result
  // itself, as in eager mode, now the node's value.
  std::map<PyObject*, ValuePtr> replaced;
  for (auto [i, output] : llvm::enumerate(outputs)) {
    if (dirty[i]) {
      oracle_.bindValue(dirty[i]->object.get(), ir::ValueRef{node, static_cast<unsigned>(i)});
      replaced[output->object.get()] = dirty[i];
      continue;
    }
    llvm::Expected<ValuePtr> fresh = unboundFake(output, differentiable[i]);
    if (!fresh)
      return fresh.takeError();
    oracle_.bindValue((*fresh)->object.get(), ir::ValueRef{node, static_cast<unsigned>(i)});
    replaced[output->object.get()] = *fresh;
  }
  if (result->isTensor())
    return replaced[result->object.get()];
  std::vector<ValuePtr> items;
  for (const ValuePtr& item : result->items)
    items.push_back(item->isTensor() ? replaced[item->object.get()] : item);
  ValuePtr tuple = makeTuple(std::move(items));
  tuple->object = result->object;
  return tuple;
}

llvm::Expected<std::vector<ValuePtr>>
Interpreter::dirtyOutputs(const std::string& name, const ValuePtr& ctx,
                          const std::vector<ValuePtr>& outputs, const ForwardArguments& given,
                          ir::AutogradFunctionCall& call) {
  std::vector<ValuePtr> dirty(outputs.size());
  call.dirty.assign(outputs.size(), -1);
  ValuePtr marked = contextAttribute([&] { return instanceAttr(ctx, "dirty_tensors"); });
  if (!marked || !marked->isSequence())
    return dirty;
  for (const ValuePtr& tensor : marked->items) {
    // What forward was given for a tensor argument that requires grad: the
    // argument detached (AutogradFunctions.cpp).
    auto original =
        tensor->isTensor() ? given.originals.find(tensor->object.get()) : given.originals.end();
    std::optional<ir::ValueRef> ref;
    if (original != given.originals.end())
      ref = oracle_.valueOf(original->second->object.get());
    auto input = ref ? llvm::find(call.inputs, *ref) : call.inputs.end();
    if (input == call.inputs.end())
      return captureError(name + ".forward marks dirty (ctx.mark_dirty) a tensor that is not an "
                                 "argument requiring grad, which a graph applying it with "
                                 "autograd does not support");
    if (ref->node->isInput())
      return captureError(name + ".forward marks dirty (ctx.mark_dirty) a tensor the graph is "
                                 "given, which a graph applying it with autograd does not "
                                 "support: modify a tensor the program computes");
    if (tensorPredicate(original->second, "_is_view"))
      return captureError(name + ".forward marks dirty (ctx.mark_dirty) a view of another "
                                 "tensor, which a graph applying it with autograd does not "
                                 "support");
    auto output = llvm::find_if(
        outputs, [&](const ValuePtr& v) { return v->object.get() == tensor->object.get(); });
    if (output == outputs.end())
      return captureError(name + ".forward marks dirty (ctx.mark_dirty) a tensor it does not "
                                 "return, which a graph applying it with autograd does not "
                                 "support");
    size_t i = output - outputs.begin();
    dirty[i] = original->second;
    call.dirty[i] = input - call.inputs.begin();
  }
  return dirty;
}

} // namespace dync::capture
