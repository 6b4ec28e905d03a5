//===- AutogradFunctions.cpp - Custom autograd.Function.apply -------------===//
//
// `Combine.apply(x, mask)` for a torch.autograd.Function subclass (defined
// at module level or while capturing). apply is forward (and setup_context,
// for functions that define it) run on a context that keeps what forward
// tells it for backward and otherwise does nothing: both are inlined like
// any other Python code, with grad mode off as apply runs them (so what
// forward reads besides its inputs, a parameter, records no autograd
// either). A call that records autograd (grad mode on, an input requiring
// grad) also captures backward into a graph of its own
// (AutogradBackward.cpp).
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/AutogradFunctions.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/CaptureObjects.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/Interpreter.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/embedding/PyStrings.h"
#include "ir/GraphBuilder.h"

namespace dync::capture {

using python::PyRef;

namespace {

/// A Function class's forward and setup_context, and whether the class
/// defines setup_context itself (then forward takes no ctx, and apply calls
/// setup_context(ctx, inputs, output) after it).
struct ForwardParts {
  ValuePtr forward, setupContext;
  bool separateSetup = false;
};

llvm::Expected<ForwardParts> forwardParts(BuiltinContext& interp, const ValuePtr& cls) {
  llvm::Expected<ValuePtr> forward = interp.getAttr(cls, "forward");
  if (!forward)
    return forward.takeError();
  llvm::Expected<ValuePtr> setupContext = interp.getAttr(cls, "setup_context");
  if (!setupContext)
    return setupContext.takeError();
  llvm::Expected<PyRef> baseSetup =
      importObject("torch.autograd.function._SingleLevelFunction.setup_context");
  if (!baseSetup)
    return baseSetup.takeError();
  return ForwardParts{*forward, *setupContext, (*setupContext)->object.get() != baseSetup->get()};
}

} // namespace

bool anyRequiresGrad(const ValuePtr& value) {
  if (value->isTensor()) {
    PyRef flag = PyRef::steal(PyObject_GetAttrString(value->object.get(), "requires_grad"));
    if (!flag)
      PyErr_Clear();
    return flag && flag.get() == Py_True;
  }
  if (value->isSequence())
    return llvm::any_of(value->items, anyRequiresGrad);
  return false;
}

bool Interpreter::isAutogradApply(const Value& function) {
  if (!function.object)
    return false;
  if (!autogradApply_) {
    llvm::Expected<PyRef> apply = importObject("torch.autograd.function.Function.apply");
    if (!apply) {
      llvm::consumeError(apply.takeError());
      return false;
    }
    PyObject* underlying =
        PyMethod_Check(apply->get()) ? PyMethod_GET_FUNCTION(apply->get()) : apply->get();
    autogradApply_ = PyRef::borrow(underlying);
  }
  return function.object.get() == autogradApply_.get();
}

llvm::Expected<ValuePtr> Interpreter::applyAutogradFunction(std::vector<ValuePtr> args,
                                                            KeywordArgs kwargs) {
  if (args.empty() || args[0]->kind != ValueKind::Object || !PyType_Check(args[0]->object.get()))
    return captureError("autograd.Function.apply() called without its class");
  ValuePtr cls = args[0];
  args.erase(args.begin());
  std::string name = qualifiedTypeName(cls->object.get());

  // Eager mode records a backward node when grad mode is on and an input
  // requires grad: the graph then holds the node too (AutogradBackward.cpp).
  PyRef enabled = PyRef::steal(PyObject_CallMethod(types_.torch.get(), "is_grad_enabled", nullptr));
  if (!enabled)
    return pythonError("reading the grad mode");
  llvm::Expected<bool> bound = bindApplyKeywords(cls, name, args, kwargs);
  if (!bound)
    return bound.takeError();

  // Only tensor arguments are inputs: one in a list or tuple is not, and
  // gets no gradient.
  bool gradMode = enabled.get() == Py_True;
  auto inputRequiresGrad = [](const ValuePtr& v) { return v->isTensor() && anyRequiresGrad(v); };
  bool recording =
      gradMode &&
      (llvm::any_of(args, inputRequiresGrad) ||
       llvm::any_of(kwargs, [&](const auto& kw) { return inputRequiresGrad(kw.second); }));
  if (recording)
    return applyRecordingAutogradFunction(cls, name, std::move(args));

  // No input needs a gradient: grad mode is off or none requires one. With
  // grad mode on, tensors requiring grad in containers are read detached,
  // as forward reads them with grad mode off.
  ForwardArguments given;
  if (gradMode)
    for (ValuePtr& arg : args)
      if (!arg->isTensor() && anyRequiresGrad(arg)) {
        llvm::Expected<ValuePtr> detached = detachNested(arg, given);
        if (!detached)
          return detached.takeError();
        arg = *detached;
      }
  llvm::Expected<ValuePtr> ctx =
      autogradContext(std::vector<ValuePtr>(args.size(), makeBool(false)));
  if (!ctx)
    return ctx.takeError();
  llvm::Expected<ValuePtr> result =
      runAutogradForward(cls, name, *ctx, std::move(args), std::move(kwargs));
  if (!result)
    return result.takeError();
  return restoreNested(name, *result, given);
}

//===----------------------------------------------------------------------===//
// Keyword arguments
//===----------------------------------------------------------------------===//

llvm::Expected<bool> Interpreter::bindApplyKeywords(const ValuePtr& cls, const std::string& name,
                                                    std::vector<ValuePtr>& args,
                                                    KeywordArgs& kwargs) {
  // apply binds keyword arguments to forward's parameters (after ctx), so
  // they are inputs in forward's order, as positional ones are; a function
  // with setup_context has its defaults bound too (inspect's bind and
  // apply_defaults), so they count among the inputs.
  llvm::Expected<ForwardParts> parts = forwardParts(*this, cls);
  if (!parts)
    return parts.takeError();
  const ValuePtr* forward = &parts->forward;
  bool separateSetup = parts->separateSetup;
  if (kwargs.empty() && !separateSetup)
    return false;
  if ((*forward)->kind != ValueKind::Function) {
    if (kwargs.empty())
      return false;
    return captureError(name + ".apply() with keyword arguments to a forward that is not a "
                               "Python function is not supported");
  }
  auto* code = reinterpret_cast<PyCodeObject*>((*forward)->code.get());
  if (code->co_kwonlyargcount > 0 || (code->co_flags & (CO_VARARGS | CO_VARKEYWORDS)))
    return captureError(name + ".apply() binds its arguments to a forward with *args, "
                               "keyword-only parameters or **kwargs, which is not supported");
  size_t first = separateSetup ? 0 : 1, count = static_cast<size_t>(code->co_argcount);
  auto parameter = [&](size_t i) {
    return python::utf8Of(PyTuple_GET_ITEM(code->co_localsplusnames, i)).value_or("?");
  };
  std::vector<ValuePtr> slots = args;
  for (const auto& [keyword, value] : kwargs) {
    size_t index = first;
    while (index < count && parameter(index) != keyword)
      ++index;
    if (index == count)
      return raiseBuiltin(PyExc_TypeError,
                          "forward() got an unexpected keyword argument '" + keyword + "'");
    size_t position = index - first;
    if (position < slots.size() && slots[position])
      return raiseBuiltin(PyExc_TypeError,
                          "forward() got multiple values for argument '" + keyword + "'");
    if (position >= slots.size())
      slots.resize(position + 1);
    slots[position] = value;
  }
  // Defaults, for a function with setup_context, to every parameter.
  const std::vector<ValuePtr>& defaults = (*forward)->items;
  if (separateSetup)
    slots.resize(std::max(slots.size(), count - first));
  for (size_t position = args.size(); position < slots.size(); ++position) {
    if (slots[position])
      continue;
    size_t index = position + first;
    if (separateSetup && index + defaults.size() >= count) {
      slots[position] = defaults[index + defaults.size() - count];
      continue;
    }
    return raiseBuiltin(PyExc_TypeError,
                        separateSetup
                            ? "missing a required argument: '" + parameter(index) + "'"
                            : "forward() missing required argument: '" + parameter(index) +
                                  "' (position " + std::to_string(position) + ")");
  }
  args = std::move(slots);
  kwargs.clear();
  return true;
}

//===----------------------------------------------------------------------===//
// Tensors nested in tuples and lists
//===----------------------------------------------------------------------===//

llvm::Expected<ValuePtr> Interpreter::detachedTensor(const ValuePtr& tensor) {
  // `aten::detach`, which torch's decompositions would make an alias (a
  // view autograd tracks): a fake of its own, bound to the node.
  std::optional<ir::ValueRef> ref = oracle_.valueOf(tensor->object.get());
  if (!ref)
    return captureError("autograd.Function.apply(): an argument is no value of the graph");
  // The fake is torch's detach of the argument's, so it shares its version
  // counter: forward's in-place writes move the argument's version, as
  // they do in eager mode. What the oracle recorded for it is erased.
  llvm::Expected<PyRef> detach = importObject("torch.Tensor.detach");
  if (!detach)
    return detach.takeError();
  ir::Graph& graph = oracle_.builder().graph();
  ir::Node* last = graph.nodes().empty() ? nullptr : &graph.nodes().back();
  llvm::Expected<ValuePtr> detached = callOracle(detach->get(), {tensor}, {});
  while (!graph.nodes().empty() && &graph.nodes().back() != last)
    graph.erase(&graph.nodes().back());
  if (!detached)
    return detached.takeError();
  const ir::Type& type = *ref->node->resultType(ref->index);
  ir::Node* node = oracle_.builder().addCall(
      "aten::detach.default", {ir::Argument::value(ref->node, ref->index)},
      ir::Type::tensor(type.dtype(), type.sizes(), type.strides(), type.device()));
  oracle_.bindValue((*detached)->object.get(), ir::ValueRef{node, std::nullopt});
  return *detached;
}

llvm::Expected<ValuePtr> Interpreter::detachNested(const ValuePtr& arg, ForwardArguments& given) {
  if (arg->isTensor()) {
    if (!anyRequiresGrad(arg))
      return arg;
    llvm::Expected<ValuePtr> detached = detachedTensor(arg);
    if (!detached)
      return detached.takeError();
    given.originals[(*detached)->object.get()] = arg;
    return *detached;
  }
  if (!arg->isSequence() || !anyRequiresGrad(arg))
    return arg;
  // A copy: apply's list stays as the caller holds it; forward changing
  // the copy is refused after it runs (restoreNested).
  std::vector<ValuePtr> items;
  for (const ValuePtr& item : arg->items) {
    llvm::Expected<ValuePtr> detached = detachNested(item, given);
    if (!detached)
      return detached.takeError();
    items.push_back(*detached);
  }
  ValuePtr copy = arg->kind == ValueKind::Tuple ? makeTuple(items) : makeList(items);
  given.originals[copy.get()] = arg;
  if (arg->kind == ValueKind::List)
    given.lists.emplace_back(copy, std::move(items));
  return copy;
}

llvm::Expected<ValuePtr> Interpreter::restoreNested(const std::string& name, const ValuePtr& value,
                                                    const ForwardArguments& given) {
  for (const auto& [copy, items] : given.lists)
    if (copy->items != items)
      return captureError(name + ".forward changes a list it was given that holds tensors "
                                 "requiring grad, which a graph recording autograd does not "
                                 "support");
  auto it = given.originals.find(value->isTensor() ? static_cast<const void*>(value->object.get())
                                                   : static_cast<const void*>(value.get()));
  if (it != given.originals.end())
    return it->second;
  if (!value->isSequence())
    return value;
  std::vector<ValuePtr> items;
  bool changed = false;
  for (const ValuePtr& item : value->items) {
    llvm::Expected<ValuePtr> restored = restoreNested(name, item, given);
    if (!restored)
      return restored.takeError();
    changed |= *restored != item;
    items.push_back(*restored);
  }
  if (!changed)
    return value;
  // A list is held by identity, maybe elsewhere too: its items are not
  // replaced behind the program's back.
  if (value->kind == ValueKind::List)
    return captureError(name + ".forward returns a list holding a tensor requiring grad it was "
                               "given, which a graph recording autograd does not support");
  return makeTuple(std::move(items));
}

llvm::Expected<ValuePtr> Interpreter::autogradContext(std::vector<ValuePtr> needsGrad) {
  // The context forward receives (capture_objects.py): its methods are
  // Python, so capture inlines them over an object that exists only in
  // capture (Instances.cpp), and tensors can be its attributes.
  if (!contextClass_) {
    llvm::Expected<PyRef> cls = captureObject("InferenceContext");
    if (!cls)
      return cls.takeError();
    contextClass_ = std::move(*cls);
  }
  return construct(makeValue(ValueKind::Object, contextClass_), {makeTuple(std::move(needsGrad))},
                   {});
}

void Interpreter::setRealGradMode(bool on) {
  PyRef done = PyRef::steal(
      PyObject_CallMethod(types_.torch.get(), "set_grad_enabled", "O", on ? Py_True : Py_False));
  if (!done)
    PyErr_Clear();
}

llvm::Expected<ValuePtr>
Interpreter::runAutogradForward(const ValuePtr& cls, const std::string& name, const ValuePtr& ctx,
                                std::vector<ValuePtr> args, KeywordArgs kwargs) {
  // Function.apply runs forward (and setup_context) with grad mode off, so
  // nothing forward computes records autograd, whatever it reads besides
  // its inputs (a module's parameter): eager's result then does not require
  // grad. Torch's real mode is switched, as a no_grad() block switches it,
  // so the fake results and the graph's grad-mode checks see what eager
  // sees; it is put back however forward ends.
  PyRef enabled = PyRef::steal(PyObject_CallMethod(types_.torch.get(), "is_grad_enabled", nullptr));
  if (!enabled)
    return pythonError("reading the grad mode");
  bool switchOff = enabled.get() == Py_True;
  if (switchOff)
    if (llvm::Error refused = recorder_.irreversible("applying an autograd.Function"))
      return refused;
  // forward, and setup_context when the class defines one.
  auto runForward = [&]() -> llvm::Expected<ValuePtr> {
    llvm::Expected<ForwardParts> parts = forwardParts(*this, cls);
    if (!parts)
      return parts.takeError();
    const ValuePtr* forward = &parts->forward;
    const ValuePtr* setupContext = &parts->setupContext;
    if (!parts->separateSetup) {
      args.insert(args.begin(), ctx);
      return call(*forward, std::move(args), std::move(kwargs));
    }
    // forward without ctx, then setup_context(ctx, inputs, output), as
    // Function.apply does when setup_context is defined.
    if (!kwargs.empty())
      return captureError(name + ".apply() with keyword arguments and a setup_context is not "
                                 "supported");
    std::vector<ValuePtr> inputs = args;
    if ((*forward)->kind == ValueKind::Function) {
      auto* code = reinterpret_cast<PyCodeObject*>((*forward)->code.get());
      const std::vector<ValuePtr>& defaults = (*forward)->items;
      size_t argCount = static_cast<size_t>(code->co_argcount);
      for (size_t i = inputs.size(); i < argCount; ++i)
        if (i + defaults.size() >= argCount)
          inputs.push_back(defaults[i + defaults.size() - argCount]);
    }
    llvm::Expected<ValuePtr> output = call(*forward, std::move(args), {});
    if (!output)
      return output.takeError();
    llvm::Expected<ValuePtr> setup =
        call(*setupContext, {ctx, makeTuple(std::move(inputs)), *output}, {});
    if (!setup)
      return setup.takeError();
    return *output;
  };
  if (switchOff)
    setRealGradMode(false);
  llvm::Expected<ValuePtr> result = runForward();
  if (switchOff)
    setRealGradMode(true);
  return result;
}

} // namespace dync::capture
