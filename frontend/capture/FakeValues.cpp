//===- FakeValues.cpp - Values to and from the oracle's Python objects ----===//
//
// The tensor oracle computes on Python objects: fake tensors, SymInts and
// constants. These turn values into the objects a torch call takes and what
// it returns back into values, and run a call through the oracle.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/Interpreter.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/capture/SizeTensorArguments.h"
#include "frontend/embedding/PyStrings.h"

namespace dync::capture {

using python::PyRef;

llvm::Expected<ValuePtr> Interpreter::wrapFake(PyObject* object) {
  PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(object));
  if (PyObject_IsInstance(object, types_.tensor.get()) == 1)
    return makeValue(ValueKind::Tensor, PyRef::borrow(object));
  if (type == types_.symInt.get() || type == types_.symFloat.get() || type == types_.symBool.get())
    return makeValue(ValueKind::SymNum, PyRef::borrow(object));
  if (PyTuple_Check(object) || PyList_Check(object)) {
    std::vector<ValuePtr> items;
    PyRef fast = PyRef::steal(PySequence_Fast(object, "not a sequence"));
    if (!fast)
      return pythonError("reading a result");
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast.get()); ++i) {
      llvm::Expected<ValuePtr> item = wrapFake(PySequence_Fast_GET_ITEM(fast.get(), i));
      if (!item)
        return item.takeError();
      items.push_back(*item);
    }
    if (PyList_Check(object))
      return makeList(std::move(items));
    ValuePtr value = makeTuple(std::move(items));
    if (!PyTuple_CheckExact(object))
      value->object = PyRef::borrow(type);
    return value;
  }
  if (PyDict_CheckExact(object)) {
    ValuePtr value = makeValue(ValueKind::Dict);
    PyObject *key, *item;
    Py_ssize_t pos = 0;
    while (PyDict_Next(object, &pos, &key, &item)) {
      llvm::Expected<ValuePtr> wrapped = wrapFake(item);
      if (!wrapped)
        return wrapped.takeError();
      value->entries.emplace_back(makeConstant(PyRef::borrow(key)), *wrapped);
    }
    return value;
  }
  return values_.wrapReal(object, nullptr);
}

llvm::Expected<PyRef> Interpreter::toPython(const ValuePtr& value) {
  switch (value->kind) {
  case ValueKind::Constant:
  case ValueKind::Tensor:
  case ValueKind::SymNum:
  case ValueKind::TorchCallable:
  case ValueKind::Builtin:
  case ValueKind::Object:
    return value->object;
  case ValueKind::Tuple:
  case ValueKind::List:
  case ValueKind::Set: {
    PyRef list = PyRef::steal(PyList_New(0));
    for (const ValuePtr& item : value->items) {
      llvm::Expected<PyRef> converted = toPython(item);
      if (!converted)
        return converted.takeError();
      PyList_Append(list.get(), converted->get());
    }
    if (value->kind == ValueKind::List)
      return list;
    if (value->kind == ValueKind::Set)
      return PyRef::steal(PySet_New(list.get()));
    PyRef tuple = PyRef::steal(PyList_AsTuple(list.get()));
    if (value->object && PyType_Check(value->object.get())) {
      // torch.Size and other tuple subclasses keep their type, so torch sees
      // what the program built. A named tuple takes its fields as separate
      // arguments: `_make` builds one from an iterable.
      PyRef make = PyRef::steal(PyObject_GetAttrString(value->object.get(), "_make"));
      if (!make)
        PyErr_Clear();
      PyRef rebuilt =
          PyRef::steal(PyObject_CallOneArg(make ? make.get() : value->object.get(), tuple.get()));
      if (rebuilt)
        return rebuilt;
      PyErr_Clear();
    }
    return tuple;
  }
  case ValueKind::Dict: {
    PyRef dict = PyRef::steal(PyDict_New());
    for (const auto& [key, item] : value->entries) {
      llvm::Expected<PyRef> k = toPython(key);
      if (!k)
        return k.takeError();
      llvm::Expected<PyRef> v = toPython(item);
      if (!v)
        return v.takeError();
      if (PyDict_SetItem(dict.get(), k->get(), v->get()) < 0)
        return pythonError("building a dict");
    }
    if (value->object && PyType_Check(value->object.get())) {
      // An OrderedDict: the same entries, in the same order.
      PyRef typed = PyRef::steal(PyObject_CallOneArg(value->object.get(), dict.get()));
      if (!typed)
        return pythonError("building a " + qualifiedTypeName(value->object.get()));
      return typed;
    }
    return dict;
  }
  case ValueKind::Slice: {
    PyRef parts[3];
    for (int i = 0; i < 3; ++i) {
      llvm::Expected<PyRef> part = toPython(value->items[i]);
      if (!part)
        return part.takeError();
      parts[i] = *part;
    }
    return PyRef::steal(PySlice_New(parts[0].get(), parts[1].get(), parts[2].get()));
  }
  case ValueKind::NNModule:
    return value->object;
  case ValueKind::Instance:
    // The object exists only in capture; torch would need the real one.
    return captureError("an object of class '" + qualifiedTypeName(value->object.get()) +
                        "' made while capturing cannot be passed to a torch function");
  default:
    return captureError("a " + spelling(value->kind) +
                        " value cannot be passed to a torch function");
  }
}

llvm::Expected<PyRef> Interpreter::pythonType(const ValuePtr& value) {
  auto typeOf = [](PyObject* object) {
    return PyRef::borrow(reinterpret_cast<PyObject*>(Py_TYPE(object)));
  };
  if (value->isTensor()) {
    // The fake stands for a real tensor: an input's own type (a Parameter
    // stays a Parameter), else what eager computes, torch.Tensor.
    if (PyObject* real = values_.realTensorOf(value))
      return typeOf(real);
    return importObject("torch.Tensor");
  }
  if (PyObject* real = value->realObject())
    return typeOf(real);
  switch (value->kind) {
  case ValueKind::Function:
    // Made by MAKE_FUNCTION during capture.
    return PyRef::borrow(reinterpret_cast<PyObject*>(&PyFunction_Type));
  case ValueKind::Tuple:
    if (value->object && PyType_Check(value->object.get()))
      return value->object;
    return PyRef::borrow(reinterpret_cast<PyObject*>(&PyTuple_Type));
  case ValueKind::List:
    // An object of a class deriving from list keeps its class in `object`
    // (ListInstances.cpp).
    if (value->object && PyType_Check(value->object.get()))
      return value->object;
    return PyRef::borrow(reinterpret_cast<PyObject*>(&PyList_Type));
  case ValueKind::Dict:
    // An OrderedDict keeps its class in `object`.
    if (value->object && PyType_Check(value->object.get()))
      return value->object;
    return PyRef::borrow(reinterpret_cast<PyObject*>(&PyDict_Type));
  case ValueKind::Set:
    return PyRef::borrow(reinterpret_cast<PyObject*>(&PySet_Type));
  case ValueKind::Slice:
    return PyRef::borrow(reinterpret_cast<PyObject*>(&PySlice_Type));
  case ValueKind::Range:
    return PyRef::borrow(reinterpret_cast<PyObject*>(&PyRange_Type));
  case ValueKind::BoundMethod:
    return PyRef::borrow(reinterpret_cast<PyObject*>(&PyMethod_Type));
  case ValueKind::Instance:
    return value->object;
  default:
    return captureError("the type of a " + spelling(value->kind) + " value is not known");
  }
}

llvm::Expected<Interpreter::PythonCallArguments>
Interpreter::toPythonArguments(const std::vector<ValuePtr>& args, const KeywordArgs& kwargs) {
  PythonCallArguments call;
  call.args = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(args.size())));
  if (!call.args)
    return pythonError("building call arguments");
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::Expected<PyRef> arg = toPython(args[i]);
    if (!arg)
      return arg.takeError();
    PyTuple_SET_ITEM(call.args.get(), i, arg->release());
  }
  if (kwargs.empty())
    return call;
  call.kwargs = PyRef::steal(PyDict_New());
  if (!call.kwargs)
    return pythonError("building call arguments");
  for (const auto& [name, value] : kwargs) {
    llvm::Expected<PyRef> arg = toPython(value);
    if (!arg)
      return arg.takeError();
    if (PyDict_SetItemString(call.kwargs.get(), name.c_str(), arg->get()) < 0)
      return pythonError("building call arguments");
  }
  return call;
}

llvm::Expected<ValuePtr> Interpreter::callOracle(PyObject* callable,
                                                 const std::vector<ValuePtr>& args,
                                                 const KeywordArgs& kwargs) {
  // torch's ShapeEnv keeps what a call decided, and the oracle the ids it
  // gave: nothing takes a call back.
  if (llvm::Error refused = recorder_.irreversible("a call of the tensor oracle"))
    return refused;
  llvm::Expected<PythonCallArguments> call = toPythonArguments(args, kwargs);
  if (!call)
    return call.takeError();
  auto& [tuple, dict] = *call;
  // A one-element tensor the call reads as an int is read first, so its
  // value is a node's (SizeTensorArguments.h).
  std::vector<ValuePtr> sizesRead = args;
  KeywordArgs kwargsRead = kwargs;
  llvm::Expected<bool> readSizes = readSizeTensors(
      callable, tuple.get(), dict.get(), sizesRead, kwargsRead,
      [&](PyObject* read, const ValuePtr& tensor) { return callOracle(read, {tensor}, {}); });
  if (!readSizes)
    return readSizes.takeError();
  if (*readSizes)
    return callOracle(callable, sizesRead, kwargsRead);
  reportLocation();
  oracle_.takeRaisedException();
  llvm::Expected<PyRef> result = oracle_.call(callable, tuple.get(), dict.get());
  if (!result) {
    // The oracle's message names the callable and torch's exception. An
    // exception torch raised on the program's shapes (a mismatch) is the
    // program's: a handler may catch it. The shapes that led to it are
    // pinned by the guards already, so another call with other shapes
    // misses the artifact.
    std::string message = llvm::toString(result.takeError());
    PyRef raised = oracle_.takeRaisedException();
    if (raised && isOracleProgramException(raised.get()))
      return raiseObject(std::move(raised), message);
    // An int read from data that torch needed as a number (a size its
    // guards decide, a length): specialized to the example's value, the
    // call runs again and sees the number.
    llvm::Expected<bool> specialized = specializeIntsOnExample(nullptr, message);
    if (!specialized)
      return specialized.takeError();
    if (*specialized)
      return callOracle(callable, args, kwargs);
    return captureError(message);
  }
  if (llvm::Error error = checkDynamic())
    return error;
  return wrapFake(result->get());
}

} // namespace dync::capture
