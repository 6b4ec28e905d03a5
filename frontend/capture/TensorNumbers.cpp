//===- TensorNumbers.cpp - float(), bool() and int() of computed values ---===//
#include "frontend/capture/TensorNumbers.h"

#include "frontend/capture/CaptureError.h"

namespace dync::capture {

using python::PyRef;

llvm::Expected<PyRef> scalarsFunction(const char* name) {
  PyRef module = PyRef::steal(PyImport_ImportModule("dync_oracle_scalars"));
  PyRef function = module ? PyRef::steal(PyObject_GetAttrString(module.get(), name)) : PyRef();
  if (!function) {
    PyErr_Clear();
    return captureError(llvm::Twine("the oracle's ") + name + " is missing");
  }
  return function;
}

llvm::Expected<bool> isDataNumber(oracle::TensorOracle& oracle, const ValuePtr& value) {
  if (value->kind != ValueKind::SymNum)
    return false;
  if (oracle.valueOf(value->object.get()))
    return true;
  llvm::Expected<PyRef> test = scalarsFunction("is_data_number");
  if (!test)
    return test.takeError();
  PyRef answer = PyRef::steal(PyObject_CallOneArg(test->get(), value->object.get()));
  if (!answer)
    return captureError("the oracle's is_data_number failed");
  return answer.get() == Py_True;
}

namespace {

bool isType(PyObject* type, PyTypeObject& python) {
  return type == reinterpret_cast<PyObject*>(&python);
}

} // namespace

llvm::Expected<ValuePtr> numberFromData(BuiltinContext& interp, PyObject* type,
                                        const ValuePtr& value) {
  if (value->isTensor()) {
    const char* function = isType(type, PyFloat_Type)  ? "float_of_tensor"
                           : isType(type, PyBool_Type) ? "bool_of_tensor"
                           : isType(type, PyLong_Type) ? "int_of_tensor"
                                                       : nullptr;
    if (!function)
      return nullptr;
    llvm::Expected<PyRef> convert = scalarsFunction(function);
    if (!convert)
      return convert.takeError();
    return interp.callOracle(convert->get(), {value}, {});
  }
  // int() of a symbolic int is the int itself, data-dependent or not.
  if (value->kind == ValueKind::SymNum && isType(type, PyLong_Type) &&
      Py_TYPE(value->object.get()) == reinterpret_cast<PyTypeObject*>(interp.types().symInt.get()))
    return value;
  if (value->kind != ValueKind::SymNum)
    return nullptr;
  if (!interp.oracle().valueOf(value->object.get())) {
    // float() and abs() of an int computed from tensor data (item()'s u0)
    // are nodes too.
    llvm::Expected<bool> data = isDataNumber(interp.oracle(), value);
    if (!data)
      return data.takeError();
    if (!*data)
      return nullptr;
    PyObject* abs = PyDict_GetItemString(PyEval_GetBuiltins(), "abs");
    if (!isType(type, PyFloat_Type) && type != abs)
      return nullptr;
    PyObject* function =
        type == abs
            ? PyDict_GetItemString(PyModule_GetDict(interp.types().operatorModule.get()), "abs")
            : nullptr;
    PyRef symFloat;
    if (!function) {
      symFloat = PyRef::steal(PyObject_GetAttrString(interp.types().torch.get(), "sym_float"));
      if (!symFloat)
        return captureError("torch.sym_float is missing");
      function = symFloat.get();
    }
    return interp.callOracle(function, {value}, {});
  }
  // A float or bool a node computes: float() of a float and bool() of a
  // bool are the value itself; float() of a bool is recorded.
  PyObject* kind = reinterpret_cast<PyObject*>(Py_TYPE(value->object.get()));
  bool isFloat = kind == interp.types().symFloat.get();
  if ((isType(type, PyFloat_Type) && isFloat) || (isType(type, PyBool_Type) && !isFloat))
    return value;
  if (type == PyDict_GetItemString(PyEval_GetBuiltins(), "abs")) {
    PyObject* abs =
        PyDict_GetItemString(PyModule_GetDict(interp.types().operatorModule.get()), "abs");
    return interp.callOracle(abs, {value}, {});
  }
  if (isType(type, PyLong_Type)) {
    // int(s) truncates: a node giving an int of a symbol of its own.
    llvm::Expected<PyRef> toInt = scalarsFunction("int_of_number");
    if (!toInt)
      return toInt.takeError();
    return interp.callOracle(toInt->get(), {value}, {});
  }
  if (isType(type, PyFloat_Type)) {
    PyRef symFloat = PyRef::steal(PyObject_GetAttrString(interp.types().torch.get(), "sym_float"));
    if (!symFloat)
      return captureError("torch.sym_float is missing");
    return interp.callOracle(symFloat.get(), {value}, {});
  }
  return nullptr;
}

/// Whether any of \p args is a number computed from tensor data.
static llvm::Expected<bool> anyDataNumber(BuiltinContext& interp,
                                          const std::vector<ValuePtr>& args) {
  bool any = false;
  for (const ValuePtr& arg : args) {
    llvm::Expected<bool> data = isDataNumber(interp.oracle(), arg);
    if (!data)
      return data.takeError();
    any = any || *data;
  }
  return any;
}

llvm::Expected<ValuePtr> functionOfDataNumbers(BuiltinContext& interp, PyObject* function,
                                               const std::vector<ValuePtr>& args) {
  llvm::Expected<bool> any = anyDataNumber(interp, args);
  if (!any)
    return any.takeError();
  if (!*any)
    return nullptr;
  return interp.callOracle(function, args, {});
}

llvm::Expected<ValuePtr> divmodOfDataNumbers(BuiltinContext& interp,
                                             const std::vector<ValuePtr>& args) {
  if (args.size() != 2)
    return nullptr;
  llvm::Expected<bool> any = anyDataNumber(interp, args);
  if (!any)
    return any.takeError();
  if (!*any)
    return nullptr;
  // With a float operand, each part is a node that raises divmod's own
  // ZeroDivisionError ("float divmod()"); ints divide as `//` and `%` do,
  // whose text for a zero divisor is divmod's too.
  bool anyFloat = false;
  for (const ValuePtr& arg : args)
    anyFloat = anyFloat || PyFloat_Check(arg->object.get()) ||
               Py_TYPE(arg->object.get()) ==
                   reinterpret_cast<PyTypeObject*>(interp.types().symFloat.get());
  if (anyFloat) {
    std::vector<ValuePtr> parts;
    for (const char* name : {"divmod_quotient", "divmod_remainder"}) {
      llvm::Expected<PyRef> part = scalarsFunction(name);
      if (!part)
        return part.takeError();
      llvm::Expected<ValuePtr> value = interp.callOracle(part->get(), args, {});
      if (!value)
        return value.takeError();
      parts.push_back(*value);
    }
    return makeTuple(std::move(parts));
  }
  llvm::Expected<ValuePtr> quotient = interp.binary("//", args[0], args[1]);
  if (!quotient)
    return quotient.takeError();
  llvm::Expected<ValuePtr> remainder = interp.binary("%", args[0], args[1]);
  if (!remainder)
    return remainder.takeError();
  return makeTuple({*quotient, *remainder});
}

} // namespace dync::capture
