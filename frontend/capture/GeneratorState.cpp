//===- GeneratorState.cpp - torch's default random generator's state ------===//
#include "frontend/capture/GeneratorState.h"

#include "frontend/capture/CaptureError.h"
#include "frontend/capture/ImportedAttribute.h"
#include "frontend/capture/MachineContext.h"
#include "frontend/embedding/PyStrings.h"

#include <array>
#include <utility>

namespace dync::capture {

using python::PyRef;

namespace {

const char* pythonName(GeneratorStateFunction function) {
  switch (function) {
  case GeneratorStateFunction::ManualSeed:
    return "manual_seed";
  case GeneratorStateFunction::Seed:
    return "seed";
  case GeneratorStateFunction::GetState:
    return "get_rng_state";
  case GeneratorStateFunction::SetState:
    return "set_rng_state";
  }
  return "?";
}

/// torch.ops.dync.NAME.default, defined by the oracle's module on first use.
llvm::Expected<PyRef> generatorOperator(const char* name) {
  PyRef module = PyRef::steal(PyImport_ImportModule("dync_oracle_generator"));
  PyRef op =
      module ? PyRef::steal(PyObject_CallMethod(module.get(), "operator", "s", name)) : PyRef();
  if (!op) {
    std::string reason = "?";
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    if (value)
      if (PyRef text = PyRef::steal(PyObject_Str(value)))
        reason = python::utf8Of(text.get()).value_or("?");
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(traceback);
    return captureError(std::string("defining dync's operator ") + name + " failed: " + reason);
  }
  return op;
}

/// The one argument of \p function, by position or as keyword \p keyword.
llvm::Expected<ValuePtr> onlyArgument(llvm::StringRef function, llvm::StringRef keyword,
                                      const std::vector<ValuePtr>& args,
                                      const KeywordArgs& kwargs) {
  if (args.size() == 1 && kwargs.empty())
    return args.front();
  if (args.empty() && kwargs.size() == 1 && kwargs.front().first == keyword)
    return kwargs.front().second;
  return captureError(function + "() takes one argument, " + keyword);
}

/// Whether torch sees an accelerator: torch.manual_seed then seeds its
/// generators too, which the graph's CPU operator would not.
bool acceleratorAvailable() {
  PyObject* accelerator = importedAttribute("torch", "accelerator");
  PyRef available = accelerator
                        ? PyRef::steal(PyObject_CallMethod(accelerator, "is_available", nullptr))
                        : PyRef();
  if (!available) {
    PyErr_Clear();
    return false;
  }
  return PyObject_IsTrue(available.get()) == 1;
}

} // namespace

std::optional<GeneratorStateFunction> generatorStateFunction(PyObject* function) {
  // All four are Python functions; the name is checked first, so other
  // calls cost one comparison.
  if (!function || !PyFunction_Check(function))
    return std::nullopt;
  PyObject* name = reinterpret_cast<PyFunctionObject*>(function)->func_name;
  static constexpr std::array<GeneratorStateFunction, 4> functions = {
      GeneratorStateFunction::ManualSeed, GeneratorStateFunction::Seed,
      GeneratorStateFunction::GetState, GeneratorStateFunction::SetState};
  for (GeneratorStateFunction candidate : functions) {
    if (!name || PyUnicode_CompareWithASCIIString(name, pythonName(candidate)) != 0)
      continue;
    // torch.manual_seed is torch.random.manual_seed wrapped by
    // torch._dynamo once that is imported (the wrapper keeps the name), so
    // both spellings are looked up.
    for (const char* module : {"torch", "torch.random"})
      if (importedAttribute(module, pythonName(candidate)) == function)
        return candidate;
  }
  return std::nullopt;
}

llvm::Expected<ValuePtr> callGeneratorStateFunction(MachineContext& context,
                                                    GeneratorStateFunction function,
                                                    const std::vector<ValuePtr>& args,
                                                    const KeywordArgs& kwargs) {
  std::string name = std::string("torch.") + pythonName(function);
  switch (function) {
  case GeneratorStateFunction::Seed:
    return captureError(name + " seeds torch's generator from a nondeterministic source, which "
                               "a graph cannot reproduce; call it outside the exported function");
  case GeneratorStateFunction::ManualSeed: {
    if (acceleratorAvailable())
      return captureError(name + " with an accelerator available also seeds the accelerator's "
                                 "generators, which a graph does not hold (its generator "
                                 "operators are the CPU generator's)");
    llvm::Expected<ValuePtr> seed = onlyArgument(name, "seed", args, kwargs);
    if (!seed)
      return seed.takeError();
    llvm::Expected<PyRef> op = generatorOperator("manual_seed");
    if (!op)
      return op.takeError();
    llvm::Expected<ValuePtr> seeded = context.callOracle(op->get(), {*seed}, {});
    if (!seeded)
      return seeded.takeError();
    // Eager returns the default generator; the same object here.
    PyObject* generator = importedAttribute("torch", "default_generator");
    if (!generator)
      return captureError("torch.default_generator is missing");
    return makeValue(ValueKind::Object, PyRef::borrow(generator));
  }
  case GeneratorStateFunction::GetState: {
    if (!args.empty() || !kwargs.empty())
      return captureError(name + "() takes no arguments");
    llvm::Expected<PyRef> op = generatorOperator("get_rng_state");
    if (!op)
      return op.takeError();
    return context.callOracle(op->get(), {}, {});
  }
  case GeneratorStateFunction::SetState: {
    llvm::Expected<ValuePtr> state = onlyArgument(name, "new_state", args, kwargs);
    if (!state)
      return state.takeError();
    llvm::Expected<PyRef> op = generatorOperator("set_rng_state");
    if (!op)
      return op.takeError();
    llvm::Expected<ValuePtr> set = context.callOracle(op->get(), {*state}, {});
    if (!set)
      return set.takeError();
    return makeNone();
  }
  }
  return captureError("unknown generator-state function");
}

} // namespace dync::capture
