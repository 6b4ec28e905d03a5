//===- ContextVars.cpp - contextvars.ContextVar over symbolic values ------===//
//
// Libraries keep per-call state in context variables: a decorator sets one
// around the call it wraps (`token = var.set(collector)`, ...,
// `var.reset(token)`) and code inside reads it (`var.get()`). Setting the
// real variable while capturing would change the process, and the value set
// may be a value that exists only in capture (a dict of tensors). So capture
// keeps its own settings: `set` records the value and gives a token, `get`
// reads the latest setting (else the real variable, whose value is assumed
// unchanged), and `reset` restores the setting the token replaced. A run
// that leaves a variable set would change the world after the graph: capture
// stops (Interpreter::checkContextVarsRestored).
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Interpreter.h"
#include "frontend/capture/PythonHelpers.h"

namespace dync::capture {

using python::PyRef;

namespace {

using Args = std::vector<ValuePtr>;

/// The ContextVar a method was called on, or an error.
llvm::Expected<PyObject*> variableOf(const Args& args, llvm::StringRef method) {
  if (args.empty() || args[0]->kind != ValueKind::Object ||
      !PyContextVar_CheckExact(args[0]->object.get()))
    return captureError("ContextVar." + method + "() needs a context variable");
  return args[0]->object.get();
}

std::string nameOf(PyObject* variable) {
  PyRef name = PyRef::steal(PyObject_GetAttrString(variable, "name"));
  if (!name) {
    PyErr_Clear();
    return "?";
  }
  return reprOf(name.get());
}

llvm::Expected<ValuePtr> contextVarGet(BuiltinContext& interp, const ValuePtr&, Args& args,
                                       KeywordArgs& kwargs) {
  llvm::Expected<PyObject*> variable = variableOf(args, "get");
  if (!variable)
    return variable.takeError();
  ValuePtr fallback = args.size() > 1 ? args[1] : nullptr;
  for (auto& [name, value] : kwargs)
    if (name == "default")
      fallback = value;
  auto& settings = interp.contextVarSettings();
  if (auto it = settings.find(*variable); it != settings.end())
    return it->second.value;
  PyObject* current = nullptr;
  if (PyContextVar_Get(*variable, nullptr, &current) < 0)
    return pythonError("ContextVar.get()");
  PyRef owned = PyRef::steal(current);
  if (owned)
    return interp.values().wrapReal(owned.get(), nullptr);
  if (fallback)
    return fallback;
  return captureError("the program raises LookupError: context variable " + nameOf(*variable) +
                      " has no value");
}

llvm::Expected<ValuePtr> contextVarSet(BuiltinContext& interp, const ValuePtr&, Args& args,
                                       KeywordArgs& kwargs) {
  llvm::Expected<PyObject*> variable = variableOf(args, "set");
  if (!variable)
    return variable.takeError();
  if (args.size() != 2 || !kwargs.empty())
    return captureError("ContextVar.set() takes exactly one argument");
  auto& settings = interp.contextVarSettings();
  BuiltinContext::ContextVarToken token{PyRef::borrow(*variable), std::nullopt};
  if (auto it = settings.find(*variable); it != settings.end())
    token.previous = it->second;
  settings[*variable] = {PyRef::borrow(*variable), args[1]};
  // The token is a new object that only this run can hold.
  PyRef object = PyRef::steal(PyObject_CallNoArgs(reinterpret_cast<PyObject*>(&PyBaseObject_Type)));
  if (!object)
    return pythonError("making a context variable token");
  interp.contextVarTokens()[object.get()] = {object, std::move(token)};
  return makeValue(ValueKind::Object, object);
}

llvm::Expected<ValuePtr> contextVarReset(BuiltinContext& interp, const ValuePtr&, Args& args,
                                         KeywordArgs& kwargs) {
  llvm::Expected<PyObject*> variable = variableOf(args, "reset");
  if (!variable)
    return variable.takeError();
  if (args.size() != 2 || !kwargs.empty())
    return captureError("ContextVar.reset() takes exactly one argument");
  auto& tokens = interp.contextVarTokens();
  auto found = args[1]->realObject() ? tokens.find(args[1]->realObject()) : tokens.end();
  if (found == tokens.end())
    return captureError("ContextVar.reset() with a token that was not made while capturing "
                        "(resetting a variable set outside the function is a side effect "
                        "outside the graph)");
  BuiltinContext::ContextVarToken token = found->second.second;
  if (token.variable.get() != *variable)
    return captureError("the program raises ValueError: the token was created by a different "
                        "ContextVar");
  tokens.erase(found);
  auto& settings = interp.contextVarSettings();
  if (token.previous)
    settings[*variable] = *token.previous;
  else
    settings.erase(*variable);
  return makeNone();
}

} // namespace

llvm::Error Interpreter::checkContextVarsRestored() const {
  if (contextVarSettings_.empty())
    return llvm::Error::success();
  return captureError("the function leaves context variable " +
                      nameOf(contextVarSettings_.begin()->first) +
                      " set, a change of state outside the graph");
}

llvm::Error registerContextVarHandlers(BuiltinContext& interp) {
  PyObject* type = reinterpret_cast<PyObject*>(&PyContextVar_Type);
  const std::pair<const char*, BuiltinHandler> handlers[] = {
      {"get", contextVarGet}, {"set", contextVarSet}, {"reset", contextVarReset}};
  for (const auto& [name, handler] : handlers) {
    PyObject* method = PyDict_GetItemString(reinterpret_cast<PyTypeObject*>(type)->tp_dict, name);
    if (!method)
      return captureError(llvm::Twine("contextvars.ContextVar has no method '") + name + "'");
    addBuiltin(interp, method, handler);
  }
  return llvm::Error::success();
}

} // namespace dync::capture
