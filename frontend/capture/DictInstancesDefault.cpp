//===- DictInstancesDefault.cpp - collections.defaultdict objects ---------===//
//
// `cache = defaultdict(list)` in forward, and objects of classes deriving
// from defaultdict: made as any object of a dict class is (DictInstances.cpp),
// an Instance whose contents hold the items, with `default_factory` (a slot
// of defaultdict's) among its attributes. defaultdict's own C methods are
// modelled: `__init__` takes the factory and gives the rest to dict's, and
// `__missing__`, which dict's `__getitem__` calls for a key it lacks, calls
// the factory and stores its result through the class's `__setitem__`, as
// CPython's does.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/BuiltinContext.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/DictInstances.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/PythonHelpers.h"

namespace dync::capture {

using python::PyRef;

namespace {

using Args = std::vector<ValuePtr>;

constexpr const char* FactoryName = "default_factory";

/// Whether \p value, a factory, is one CPython refuses: a constant that is
/// neither None nor callable.
bool refusedFactory(const ValuePtr& value) {
  return value->isConstant() && !value->isNone() && !PyCallable_Check(value->object.get());
}

/// defaultdict.__init__(self, default_factory=None, *args, **kwargs).
llvm::Expected<ValuePtr> defaultDictInit(BuiltinContext& interp, const ValuePtr&, Args& args,
                                         KeywordArgs& kwargs) {
  if (args.empty() || args[0]->kind != ValueKind::Instance || !args[0]->contents)
    return captureError("defaultdict.__init__() on a value capture cannot change");
  ValuePtr factory = args.size() > 1 ? args[1] : makeNone();
  if (refusedFactory(factory))
    return raiseBuiltin(PyExc_TypeError, "first argument must be callable or None");
  if (llvm::Error error = interp.setInstanceAttr(args[0], FactoryName, factory, /*direct=*/true))
    return error;
  // The rest is dict's __init__, which writes the items directly.
  Args rest{args[0]};
  if (args.size() > 2)
    rest.insert(rest.end(), args.begin() + 2, args.end());
  PyObject* dictInit = PyDict_GetItemString(PyDict_Type.tp_dict, "__init__");
  return interp.call(makeValue(ValueKind::Builtin, PyRef::borrow(dictInit)), std::move(rest),
                     kwargs);
}

/// defaultdict.__missing__(self, key): KeyError without a factory, else
/// `self[key] = default_factory()`, returning the new value.
llvm::Expected<ValuePtr> defaultDictMissing(BuiltinContext& interp, const ValuePtr&, Args& args,
                                            KeywordArgs& kwargs) {
  if (args.size() != 2 || !kwargs.empty())
    return captureError("defaultdict.__missing__() takes exactly one argument besides the dict");
  if (args[0]->kind != ValueKind::Instance || !args[0]->contents)
    return captureError("defaultdict.__missing__() on a value capture does not model");
  llvm::Expected<ValuePtr> factory = interp.getAttr(args[0], FactoryName);
  if (!factory)
    return factory.takeError();
  if ((*factory)->isNone())
    return keyError(interp.semantics().context(), args[1]);
  llvm::Expected<ValuePtr> made = interp.call(*factory, {});
  if (!made)
    return made.takeError();
  llvm::Expected<ValuePtr> stored =
      callInstanceSpecial(interp.semantics().context(), args[0], "__setitem__", {args[1], *made});
  if (!stored)
    return stored.takeError();
  return *made;
}

} // namespace

PyTypeObject* defaultDictType() {
  static PyObject* type = [] {
    PyRef module = PyRef::steal(PyImport_ImportModule("collections"));
    PyObject* found = module ? PyObject_GetAttrString(module.get(), "defaultdict") : nullptr;
    if (!found)
      PyErr_Clear();
    return found; // kept for the process, as the collections module keeps it
  }();
  return type && PyType_Check(type) ? reinterpret_cast<PyTypeObject*>(type) : nullptr;
}

llvm::Error registerDefaultDictHandlers(BuiltinContext& interp) {
  PyTypeObject* type = defaultDictType();
  if (!type)
    return captureError("collections.defaultdict cannot be imported");
  const std::pair<const char*, BuiltinHandler> handlers[] = {
      {"__init__", defaultDictInit},
      {"__missing__", defaultDictMissing},
  };
  for (const auto& [name, handler] : handlers)
    if (PyObject* attribute = PyDict_GetItemString(type->tp_dict, name))
      addBuiltin(interp, attribute, handler);
  return llvm::Error::success();
}

} // namespace dync::capture
