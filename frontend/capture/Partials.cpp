//===- Partials.cpp - functools.partial while capturing -------------------===//
//
// `functools.partial(f, *args, **keywords)` is a C class: capture cannot
// run its __new__ over symbolic values, and the arguments it holds may be
// tensors. It models it as CPython's _functools does instead. A partial made
// while capturing is an Instance of its class whose attributes `func`,
// `args` (a tuple) and `keywords` (a dict) are symbolic values, so reading
// them (what inspect.signature does) sees what the program gave. Calling
// one calls `func(*args, *more, **{**keywords, **more_keywords})`; a partial
// of a partial (without attributes of its own) is flattened into one, as
// CPython flattens it. Subclasses qualify when they leave construction,
// __init__ and calls to partial. A real partial the program reads (a module's
// `self.act = partial(F.gelu, approximate="tanh")`) is called the same way,
// through its attributes read with their sources.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/Interpreter.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/embedding/PyStrings.h"

#include "llvm/ADT/STLExtras.h"

namespace dync::capture {

using python::PyRef;

namespace {

PyTypeObject* partialType() {
  static PyObject* type = nullptr; // _functools' class, alive as long as Python
  if (!type) {
    llvm::Expected<PyRef> found = importObject("functools.partial");
    if (!found) {
      llvm::consumeError(found.takeError());
      return nullptr;
    }
    type = found->get();
  }
  return reinterpret_cast<PyTypeObject*>(type);
}

/// Whether instances of \p type are partials as _functools makes and calls
/// them: the class or a subclass that leaves __new__ and __call__ to it.
bool behavesAsPartial(PyTypeObject* type) {
  PyTypeObject* partial = partialType();
  return partial && PyType_IsSubtype(type, partial) && type->tp_new == partial->tp_new &&
         type->tp_call == partial->tp_call && type->tp_init == partial->tp_init;
}

ValuePtr stringKey(llvm::StringRef name) { return makeConstantSteal(python::newStr(name)); }

} // namespace

bool Interpreter::isPartialClass(PyObject* object) const {
  return PyType_Check(object) && behavesAsPartial(reinterpret_cast<PyTypeObject*>(object));
}

bool Interpreter::isPartial(const ValuePtr& value) const {
  if (value->kind == ValueKind::Instance)
    return isPartialClass(value->object.get());
  if (value->kind == ValueKind::Object || value->kind == ValueKind::Constant)
    return behavesAsPartial(Py_TYPE(value->object.get()));
  return false;
}

llvm::Expected<Interpreter::PartialParts> Interpreter::partialParts(const ValuePtr& partial) {
  PartialParts parts;
  llvm::Expected<ValuePtr> func = getAttr(partial, "func");
  if (!func)
    return func.takeError();
  llvm::Expected<ValuePtr> args = getAttr(partial, "args");
  if (!args)
    return args.takeError();
  llvm::Expected<ValuePtr> keywords = getAttr(partial, "keywords");
  if (!keywords)
    return keywords.takeError();
  if ((*args)->kind != ValueKind::Tuple || (*keywords)->kind != ValueKind::Dict)
    return captureError("a functools.partial whose args are a " + spelling((*args)->kind) +
                        " value and keywords a " + spelling((*keywords)->kind) +
                        " value is not supported");
  parts.func = *func;
  parts.args = (*args)->items;
  for (const auto& [key, value] : (*keywords)->entries) {
    std::optional<std::string> name = key->isConstant() && PyUnicode_Check(key->object.get())
                                          ? python::utf8Of(key->object.get())
                                          : std::nullopt;
    if (!name)
      return captureError("a functools.partial with a keyword that is not a string");
    parts.keywords.emplace_back(*name, value);
  }
  // Attributes of its own (a __dict__ with entries) keep CPython from
  // flattening a partial of it.
  if (partial->kind == ValueKind::Instance) {
    parts.ownAttributes = partial->entries.size() > 3;
  } else {
    PyRef dict = PyRef::steal(PyObject_GenericGetDict(partial->object.get(), nullptr));
    if (!dict)
      return pythonError("reading a functools.partial's __dict__");
    parts.ownAttributes = PyDict_GET_SIZE(dict.get()) != 0;
  }
  return parts;
}

llvm::Expected<ValuePtr> Interpreter::makePartial(const ValuePtr& cls, std::vector<ValuePtr> args,
                                                  KeywordArgs kwargs) {
  if (args.empty())
    return raiseBuiltin(PyExc_TypeError, "type 'partial' takes at least one argument");
  ValuePtr func = args.front();
  llvm::Expected<ValuePtr> callableBuiltin = values_.wrapReal(
      PyDict_GetItemString(PyModule_GetDict(types_.builtinsModule.get()), "callable"), nullptr);
  if (!callableBuiltin)
    return callableBuiltin.takeError();
  llvm::Expected<ValuePtr> callable = call(*callableBuiltin, {func});
  if (!callable)
    return callable.takeError();
  if (!(*callable)->isConstant() || (*callable)->object.get() != Py_True)
    return raiseBuiltin(PyExc_TypeError, "the first argument must be callable");
  std::vector<ValuePtr> heldArgs;
  KeywordArgs heldKeywords;
  // partial(partial(f, a), b) is partial(f, a, b), as _functools makes it.
  if (isPartial(func)) {
    llvm::Expected<PartialParts> inner = partialParts(func);
    if (!inner)
      return inner.takeError();
    if (!inner->ownAttributes) {
      func = inner->func;
      heldArgs = std::move(inner->args);
      heldKeywords = std::move(inner->keywords);
    }
  }
  heldArgs.insert(heldArgs.end(), args.begin() + 1, args.end());
  for (auto& [name, value] : kwargs) {
    auto existing = llvm::find_if(heldKeywords, [&](const auto& kw) { return kw.first == name; });
    if (existing != heldKeywords.end())
      existing->second = std::move(value);
    else
      heldKeywords.emplace_back(name, std::move(value));
  }
  ValuePtr keywords = makeValue(ValueKind::Dict);
  for (auto& [name, value] : heldKeywords)
    keywords->entries.emplace_back(stringKey(name), std::move(value));
  ValuePtr partial = makeValue(ValueKind::Instance, cls->object);
  partial->entries = {{stringKey("func"), func},
                      {stringKey("args"), makeTuple(std::move(heldArgs))},
                      {stringKey("keywords"), keywords}};
  return partial;
}

llvm::Expected<ValuePtr> Interpreter::callPartial(const ValuePtr& partial,
                                                  std::vector<ValuePtr> args, KeywordArgs kwargs) {
  llvm::Expected<PartialParts> parts = partialParts(partial);
  if (!parts)
    return parts.takeError();
  std::vector<ValuePtr> allArgs = std::move(parts->args);
  allArgs.insert(allArgs.end(), args.begin(), args.end());
  KeywordArgs allKeywords = std::move(parts->keywords);
  for (auto& [name, value] : kwargs) {
    auto existing = llvm::find_if(allKeywords, [&](const auto& kw) { return kw.first == name; });
    if (existing != allKeywords.end())
      existing->second = std::move(value);
    else
      allKeywords.emplace_back(name, std::move(value));
  }
  return call(parts->func, std::move(allArgs), std::move(allKeywords));
}

} // namespace dync::capture
