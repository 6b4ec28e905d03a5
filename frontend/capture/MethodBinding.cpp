//===- MethodBinding.cpp - Binding a function to an object ----------------===//
//
// A function is a descriptor: `func.__get__(obj)` is the method Python
// makes when `obj.name` finds `func` in obj's class, and
// `types.MethodType(func, obj)` makes the same method directly. Both give
// a BoundMethod value, so calling it inlines the function with the object
// first, as any method call does.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/MethodBinding.h"

#include "frontend/capture/BuiltinContext.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Exceptions.h"

namespace dync::capture {

using python::PyRef;

namespace {

using Args = std::vector<ValuePtr>;

PyObject* functionGetSlot() { return PyDict_GetItemString(PyFunction_Type.tp_dict, "__get__"); }

ValuePtr boundMethod(const ValuePtr& self, const ValuePtr& function) {
  ValuePtr method = makeValue(ValueKind::BoundMethod);
  method->items = {self, function};
  return method;
}

/// function.__get__(self, instance, owner=None): the function itself read
/// through a class (instance None), else the method bound to the instance.
llvm::Expected<ValuePtr> functionGet(BuiltinContext&, const ValuePtr&, Args& args,
                                     KeywordArgs& kwargs) {
  if (!kwargs.empty())
    return raiseBuiltin(PyExc_TypeError, "wrapper __get__() takes no keyword arguments");
  if (args.size() < 2)
    return raiseBuiltin(PyExc_TypeError, "expected at least 1 argument, got 0");
  if (args.size() > 3)
    return raiseBuiltin(PyExc_TypeError,
                        "expected at most 2 arguments, got " + llvm::Twine(args.size() - 1));
  if (args[0]->kind != ValueKind::Function)
    return captureError("function.__get__ on a " + spelling(args[0]->kind) + " value");
  if (args[1]->isNone()) {
    if (args.size() < 3 || args[2]->isNone())
      return raiseBuiltin(PyExc_TypeError, "__get__(None, None) is invalid");
    return args[0];
  }
  return boundMethod(args[1], args[0]);
}

/// types.MethodType(function, instance).
llvm::Expected<ValuePtr> methodType(BuiltinContext&, const ValuePtr&, Args& args,
                                    KeywordArgs& kwargs) {
  if (!kwargs.empty())
    return raiseBuiltin(PyExc_TypeError, "method() takes no keyword arguments");
  if (args.size() != 2)
    return raiseBuiltin(PyExc_TypeError,
                        "method expected 2 arguments, got " + llvm::Twine(args.size()));
  if (args[1]->isNone())
    return raiseBuiltin(PyExc_TypeError, "instance must not be None");
  switch (args[0]->kind) {
  case ValueKind::Function:
  case ValueKind::BoundMethod:
  case ValueKind::Builtin:
  case ValueKind::TorchCallable:
  case ValueKind::NNModule:
    return boundMethod(args[1], args[0]);
  case ValueKind::Constant:
    if (!PyCallable_Check(args[0]->object.get()))
      return raiseBuiltin(PyExc_TypeError, "first argument must be callable");
    [[fallthrough]];
  default:
    return captureError("types.MethodType() of a " + spelling(args[0]->kind) +
                        " value is not supported");
  }
}

} // namespace

ValuePtr functionGetMethod(const ValuePtr& function) {
  return boundMethod(function, makeValue(ValueKind::Builtin, PyRef::borrow(functionGetSlot())));
}

llvm::Error registerMethodBindingHandlers(BuiltinContext& interp) {
  if (!functionGetSlot())
    return captureError("function has no __get__");
  addBuiltin(interp, functionGetSlot(), functionGet);
  addBuiltin(interp, reinterpret_cast<PyObject*>(&PyMethod_Type), methodType);
  return llvm::Error::success();
}

} // namespace dync::capture
