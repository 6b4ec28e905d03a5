//===- WorldCalls.cpp - print, warnings and logging, made after the graph --===//
//
// Model code reports from inside forward: `print(...)`, `warnings.warn(...)`,
// `logger.info(...)`, transformers' `logger.warning_once(...)`. These calls
// hand values to the world and give nothing back that the computation reads
// (they return None), so capture does not run them: it records the call,
// with the values the program passed, and the rewritten code makes it after
// the graph ran, on the real objects (ir::SideEffect::Kind::Call,
// docs/rewrite.md). Everything that decides what the call shows is read
// then, in the caller's process, as eager reads it: the logger's level,
// handlers and filters, the warnings filters and once-per-line registry, a
// library's memo (`warning_once` is an lru_cache over its arguments).
//
// The calls recognized are found by identity, from the standard library's
// own tables: builtins.print, warnings.warn, and the logging methods named
// by logging's level table (`logging._nameToLevel`, lower-cased) and `log`,
// on logging.Logger, logging.LoggerAdapter and the logging module itself,
// plus the functions a library attached to logging.Logger or LoggerAdapter
// (their `__module__` is not logging's: transformers' `warning_once`,
// `info_once`). A subclass overriding one of them is Python capture runs as
// any other. `Logger.exception` is not among them: it logs the exception
// being handled, which exists only while the program handles it.
//
// Tensors are passed as the graph computed them at the call, so a tensor
// the program writes in place after the call is refused; lists and dicts
// are copied as they were at the call.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/WorldCalls.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Interpreter.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/embedding/PyStrings.h"

#include "llvm/ADT/Twine.h"

namespace dync::capture {

using python::PyRef;

namespace {

/// A module-level function recognized as a call into the world, found as
/// `sys.modules[module].name`.
struct ModuleFunction {
  const char* module;
  const char* name;
};

constexpr ModuleFunction ModuleFunctions[] = {{"builtins", "print"}, {"warnings", "warn"}};

/// logging's level names, lower-cased (`debug`, `info`, `warning`, `warn`,
/// `error`, `critical`, `fatal`, `notset`), and `log`: the method names of
/// its level methods. Empty if logging has no level table.
const std::vector<std::string>& levelMethodNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> found;
    llvm::Expected<PyRef> table = importObject("logging._nameToLevel");
    if (!table) {
      llvm::consumeError(table.takeError());
      return found;
    }
    if (PyDict_Check(table->get())) {
      PyObject *key = nullptr, *value = nullptr;
      for (Py_ssize_t pos = 0; PyDict_Next(table->get(), &pos, &key, &value);)
        if (std::optional<std::string> name = python::utf8Of(key))
          found.push_back(llvm::StringRef(*name).lower());
    }
    found.push_back("log");
    return found;
  }();
  return names;
}

/// logging.Logger and logging.LoggerAdapter (borrowed; logging keeps them).
std::pair<PyObject*, PyObject*> loggerTypes() {
  static const std::pair<PyObject*, PyObject*> types = [] {
    llvm::Expected<PyRef> logger = importObject("logging.Logger");
    llvm::Expected<PyRef> adapter = importObject("logging.LoggerAdapter");
    PyObject* a = logger ? logger->release() : nullptr;
    PyObject* b = adapter ? adapter->release() : nullptr;
    if (!logger)
      llvm::consumeError(logger.takeError());
    if (!adapter)
      llvm::consumeError(adapter.takeError());
    return std::make_pair(a, b);
  }();
  return types;
}

/// Whether \p object is a function (or a wrapper of one, as
/// functools.lru_cache makes) a module other than logging defined.
bool definedOutsideLogging(PyObject* object) {
  PyObject* function = object;
  PyRef wrapped;
  if (!PyFunction_Check(function)) {
    wrapped = PyRef::steal(PyObject_GetAttrString(object, "__wrapped__"));
    PyErr_Clear();
    if (!wrapped || !PyFunction_Check(wrapped.get()))
      return false;
    function = wrapped.get();
  }
  PyObject* module = PyFunction_GET_MODULE(function);
  return module && python::utf8Of(module).value_or("logging") != "logging";
}

/// The name of the logging method of class \p type that \p callee is:
/// a level method logging defines on it, or a function a library attached
/// to it. Empty if it is neither.
std::string loggingMethodName(PyObject* type, PyObject* callee) {
  for (const std::string& name : levelMethodNames()) {
    PyRef method = PyRef::steal(PyObject_GetAttrString(type, name.c_str()));
    PyErr_Clear();
    if (method && method.get() == callee)
      return name;
  }
  PyRef dict = PyRef::steal(PyObject_GetAttrString(type, "__dict__"));
  PyRef items = dict ? PyRef::steal(PyMapping_Items(dict.get())) : PyRef();
  PyErr_Clear();
  if (!items)
    return "";
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items.get()); ++i) {
    PyObject* item = PyList_GET_ITEM(items.get(), i);
    PyObject* value = PyTuple_GET_ITEM(item, 1);
    if (value == callee && definedOutsideLogging(value))
      return python::utf8Of(PyTuple_GET_ITEM(item, 0)).value_or("");
  }
  return "";
}

/// How a call is made again after the graph: the source of the callable,
/// or of the object whose method is called, and that method.
struct WorldTarget {
  std::string target;
  std::string method;
  bool logging = false;
};

/// The module functions recognized, with the source the rewritten code
/// reads each through: builtins.print, warnings.warn and the logging
/// module's functions named by its level table. Looked up once; the
/// modules keep them alive.
const std::vector<std::pair<PyObject*, std::string>>& moduleFunctions() {
  static const std::vector<std::pair<PyObject*, std::string>> functions = [] {
    std::vector<std::pair<PyObject*, std::string>> found;
    auto add = [&](const char* module, const std::string& name) {
      PyRef imported = PyRef::steal(PyImport_ImportModule(module));
      PyRef function =
          imported ? PyRef::steal(PyObject_GetAttrString(imported.get(), name.c_str())) : PyRef();
      PyErr_Clear();
      if (function)
        found.emplace_back(function.release(), "M['" + std::string(module) + "']." + name);
    };
    for (const ModuleFunction& function : ModuleFunctions)
      add(function.module, function.name);
    for (const std::string& name : levelMethodNames())
      add("logging", name);
    return found;
  }();
  return functions;
}

/// The world call \p callee called with \p args is, or nullopt.
llvm::Expected<std::optional<WorldTarget>> worldTarget(const ValuePtr& callee,
                                                       const std::vector<ValuePtr>& args) {
  PyObject* object = callee->object.get();
  if (!object || callee->kind == ValueKind::Instance)
    return std::nullopt;
  for (const auto& [function, target] : moduleFunctions())
    if (function == object)
      return WorldTarget{target, "", llvm::StringRef(target).starts_with("M['logging']")};
  // A method of a logger or an adapter, called with the object first (a
  // bound method reaches Interpreter::call as its function).
  auto [loggerType, adapterType] = loggerTypes();
  if (args.empty() || !loggerType || !adapterType)
    return std::nullopt;
  PyObject* receiver = args[0]->realObject();
  if (!receiver)
    return std::nullopt;
  for (PyObject* type : {loggerType, adapterType}) {
    if (!PyObject_TypeCheck(receiver, reinterpret_cast<PyTypeObject*>(type)))
      continue;
    std::string name = loggingMethodName(type, object);
    if (name.empty())
      continue;
    if (!args[0]->source)
      return captureError(
          "calling " + name + " on a " +
          qualifiedTypeName(reinterpret_cast<PyObject*>(Py_TYPE(receiver))) +
          " read without a source (made inside the function, or read from a container "
          "without sources): the call is made after the graph on the real logger, which the "
          "rewritten code must be able to read; keep the logger in a global or an attribute "
          "(logger = logging.getLogger(__name__) at module level)");
    return WorldTarget{args[0]->source->str(), name, true};
  }
  return std::nullopt;
}

/// \p value as it is at the call: lists and dicts copied (the program may
/// change them after), the tensors it holds noted with their versions in
/// \p tensors.
llvm::Expected<ValuePtr> atTheCall(const ValuePtr& value,
                                   std::vector<std::pair<ValuePtr, long long>>& tensors) {
  if (value->isTensor()) {
    PyRef version = PyRef::steal(PyObject_GetAttrString(value->object.get(), "_version"));
    if (!version)
      return pythonError("reading a tensor's version");
    tensors.emplace_back(value, PyLong_AsLongLong(version.get()));
    return value;
  }
  if (value->kind != ValueKind::Tuple && value->kind != ValueKind::List &&
      value->kind != ValueKind::Dict)
    return value;
  auto copy = std::make_shared<Value>(*value);
  for (ValuePtr& item : copy->items) {
    llvm::Expected<ValuePtr> taken = atTheCall(item, tensors);
    if (!taken)
      return taken.takeError();
    item = *taken;
  }
  for (auto& entry : copy->entries) {
    llvm::Expected<ValuePtr> taken = atTheCall(entry.second, tensors);
    if (!taken)
      return taken.takeError();
    entry.second = *taken;
  }
  return ValuePtr(copy);
}

/// A warning's `stacklevel` as the exported function's frame counts it:
/// warnings.warn called \p depth calls below it (in a helper capture
/// inlined, typing_extensions' @deprecated wrapper) names the frame
/// `stacklevel` frames up from there, and the rewritten code makes the call
/// from the exported function's frame. A level that names an inlined frame
/// names the exported function's line, which stands for it.
llvm::Error fromExportedFrame(std::vector<ValuePtr>& args, KeywordArgs& kwargs, size_t depth) {
  constexpr size_t StackLevelPosition = 2; // warn(message, category, stacklevel, source)
  ValuePtr* level = nullptr;
  for (auto& [name, value] : kwargs)
    if (name == "stacklevel")
      level = &value;
  if (!level && args.size() > StackLevelPosition)
    level = &args[StackLevelPosition];
  long long given = 1;
  if (level) {
    PyObject* real = (*level)->isConstant() ? (*level)->object.get() : nullptr;
    if (!real || !PyLong_CheckExact(real))
      return llvm::Error::success();
    given = PyLong_AsLongLong(real);
    if (given == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      return llvm::Error::success();
    }
  }
  long long adjusted = std::max<long long>(1, given - static_cast<long long>(depth));
  ValuePtr spelled = makeConstantSteal(PyLong_FromLongLong(adjusted));
  if (!spelled)
    return pythonError("making a warning's stacklevel");
  if (level)
    *level = spelled;
  else if (adjusted != 1)
    kwargs.emplace_back("stacklevel", spelled);
  return llvm::Error::success();
}

/// logging.getLogger (borrowed; logging keeps it), or null.
PyObject* getLoggerFunction() {
  static PyObject* function = [] {
    llvm::Expected<PyRef> found = importObject("logging.getLogger");
    if (!found) {
      llvm::consumeError(found.takeError());
      return static_cast<PyObject*>(nullptr);
    }
    return found->release();
  }();
  return function;
}

/// The name `logging.getLogger(...)` is called with, when \p callee is
/// logging.getLogger and the name is a constant str or None (or not
/// given, the root logger): the name as a str object, or None.
std::optional<PyRef> loggerNameOf(const ValuePtr& callee, const std::vector<ValuePtr>& args,
                                  const KeywordArgs& kwargs) {
  PyObject* getLogger = getLoggerFunction();
  if (!getLogger || callee->object.get() != getLogger || args.size() + kwargs.size() > 1)
    return std::nullopt;
  const ValuePtr* name = args.empty() ? nullptr : &args[0];
  for (const auto& [keyword, value] : kwargs)
    if (keyword == "name")
      name = &value;
    else
      return std::nullopt;
  if (!name)
    return PyRef::borrow(Py_None);
  PyObject* real = (*name)->isConstant() ? (*name)->object.get() : nullptr;
  if (!real || (real != Py_None && !PyUnicode_CheckExact(real)))
    return std::nullopt;
  return PyRef::borrow(real);
}

/// `logging.getLogger(name)` with a constant name: the real logger, read
/// through where logging keeps it, so that calls on it are made after the
/// graph; nullopt for any other call.
llvm::Expected<std::optional<ValuePtr>> callGetLogger(ValueBuilder& values, const ValuePtr& callee,
                                                      const std::vector<ValuePtr>& args,
                                                      const KeywordArgs& kwargs) {
  std::optional<PyRef> name = loggerNameOf(callee, args, kwargs);
  if (!name)
    return std::nullopt;
  // The process's one logger of that name. Made now if it is new, as
  // eager's call would make it; nothing else of the process changes.
  PyRef logger = PyRef::steal(PyObject_CallOneArg(getLoggerFunction(), name->get()));
  if (!logger)
    return pythonError("logging.getLogger()");
  // Where getLogger finds it: logging.root for the root logger, else the
  // manager's table by name. Reading the logger through that source guards
  // that the table holds a logger of that class (a name only a child's
  // logger made holds a placeholder, which getLogger would replace).
  llvm::Expected<PyRef> root = importObject("logging.root");
  if (!root)
    return root.takeError();
  SourcePtr source = Source::module("logging");
  if (logger.get() == root->get()) {
    source = Source::attr(source, "root");
  } else {
    std::optional<std::string> text = python::utf8Of(name->get());
    if (!text)
      return pythonError("reading a logger's name");
    source = Source::key(
        Source::attr(Source::attr(Source::attr(source, "Logger"), "manager"), "loggerDict"), *text);
  }
  llvm::Expected<ValuePtr> value = values.wrapReal(logger.get(), source);
  if (!value)
    return value.takeError();
  return std::optional<ValuePtr>(*value);
}

} // namespace

bool isLoggingMethod(PyObject* function) {
  auto [loggerType, adapterType] = loggerTypes();
  for (PyObject* type : {loggerType, adapterType})
    if (type && !loggingMethodName(type, function).empty())
      return true;
  return false;
}

llvm::Expected<std::optional<ValuePtr>> Interpreter::callWorld(const ValuePtr& callee,
                                                               const std::vector<ValuePtr>& args,
                                                               const KeywordArgs& kwargs) {
  // `logging.getLogger(name)`: the process's logger of that name, read
  // where logging keeps it, so that calls on it are made after the graph.
  if (llvm::Expected<std::optional<ValuePtr>> logger = callGetLogger(values_, callee, args, kwargs);
      !logger || *logger)
    return logger;
  llvm::Expected<std::optional<WorldTarget>> found = worldTarget(callee, args);
  if (!found)
    return found.takeError();
  if (!*found)
    return std::nullopt;
  WorldTarget& target = **found;
  std::string spelled = target.target + (target.method.empty() ? "" : "." + target.method);
  // exc_info and stack_info read the exception being handled and the
  // stack, which are the call's, not those after the graph.
  if (target.logging)
    for (const auto& [name, value] : kwargs)
      if (name == "exc_info" || name == "stack_info") {
        if (value->isConstant() && !PyObject_IsTrue(value->object.get()))
          continue;
        return captureError(
            llvm::Twine(spelled) + "(..., " + name +
            "=...) is not supported: the call is made after the graph, where the exception "
            "being handled and the stack are no longer the call's; log without it, or log "
            "outside the exported function");
      }
  WorldCall call;
  call.target = std::move(target.target);
  call.method = std::move(target.method);
  call.where = programLine();
  // The exported function's line that led to the call: the rewritten code
  // makes the call there.
  std::vector<CaptureFrame> stack = callStack();
  if (!stack.empty())
    call.line = stack.back().location.line;
  // A call made on the logger is made on the object, which is not an
  // argument.
  std::vector<ValuePtr> passed(args.begin() + (call.method.empty() ? 0 : 1), args.end());
  KeywordArgs keywords = kwargs;
  if (!target.logging && call.target == "M['warnings'].warn" && stack.size() > 1)
    if (llvm::Error error = fromExportedFrame(passed, keywords, stack.size() - 1))
      return error;
  for (ValuePtr& value : passed) {
    if (llvm::Error error = values_.readAllUnread(value))
      return error;
    llvm::Expected<ValuePtr> taken = atTheCall(value, call.tensorVersions);
    if (!taken)
      return taken.takeError();
    value = *taken;
  }
  call.args = makeTuple(std::move(passed));
  call.kwargs = makeValue(ValueKind::Dict);
  for (const auto& [name, value] : keywords) {
    if (llvm::Error error = values_.readAllUnread(value))
      return error;
    llvm::Expected<ValuePtr> taken = atTheCall(value, call.tensorVersions);
    if (!taken)
      return taken.takeError();
    ValuePtr key = makeConstantSteal(python::newStr(name));
    if (!key)
      return pythonError("making a keyword's name");
    call.kwargs->entries.emplace_back(key, *taken);
  }
  call.order = sideEffectCount_++;
  worldCalls_.push_back(std::move(call));
  return std::optional<ValuePtr>(makeNone());
}

llvm::Error Interpreter::checkWorldCallTensors() const {
  for (const WorldCall& call : worldCalls_)
    for (const auto& [tensor, version] : call.tensorVersions) {
      PyRef now = PyRef::steal(PyObject_GetAttrString(tensor->object.get(), "_version"));
      if (!now)
        return pythonError("reading a tensor's version");
      if (PyLong_AsLongLong(now.get()) == version)
        continue;
      return captureError(
          "the call of " + call.target + (call.method.empty() ? "" : "." + call.method) + " at " +
          call.where +
          " is passed a tensor the function then writes in place, which is not supported yet: "
          "the call is made after the graph, which hands back the tensor as written; pass a "
          "clone() of it");
    }
  return llvm::Error::success();
}

} // namespace dync::capture
