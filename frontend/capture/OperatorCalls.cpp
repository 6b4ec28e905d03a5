//===- OperatorCalls.cpp - Shared parts of control-flow operators ---------===//
#include "frontend/capture/OperatorCalls.h"

#include "frontend/capture/BuiltinContext.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/ImportedAttribute.h"
#include "frontend/capture/PythonHelpers.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"

namespace dync::capture {

using python::PyRef;

/// Calls the method \p name of \p self with \p args.
llvm::Expected<ValuePtr> callMethod(BuiltinContext& interp, const ValuePtr& self,
                                    llvm::StringRef name, std::vector<ValuePtr> args) {
  llvm::Expected<ValuePtr> method = interp.getAttr(self, name);
  if (!method)
    return method.takeError();
  return interp.call(*method, std::move(args), {});
}

/// A size as a Python int: a constant, or none for a symbolic one.
std::optional<long long> staticSize(const ValuePtr& size) {
  if (!size->isConstant() || !PyLong_Check(size->object.get()))
    return std::nullopt;
  return PyLong_AsLongLong(size->object.get());
}

/// Whether torch's grad mode is on.
llvm::Expected<bool> gradEnabled() {
  llvm::Expected<PyRef> isEnabled = importObject("torch.is_grad_enabled");
  if (!isEnabled)
    return isEnabled.takeError();
  PyRef enabled = PyRef::steal(PyObject_CallNoArgs(isEnabled->get()));
  if (!enabled)
    return pythonError("reading torch's grad mode");
  return enabled.get() == Py_True;
}

/// Whether \p fake has a dtype autograd differentiates (floating point or
/// complex), as torch says.
llvm::Expected<bool> differentiable(PyObject* fake) {
  PyRef dtype = PyRef::steal(PyObject_GetAttrString(fake, "dtype"));
  PyRef floating =
      dtype ? PyRef::steal(PyObject_GetAttrString(dtype.get(), "is_floating_point")) : PyRef();
  PyRef complex = dtype ? PyRef::steal(PyObject_GetAttrString(dtype.get(), "is_complex")) : PyRef();
  if (!floating || !complex)
    return pythonError("reading a tensor's dtype");
  return floating.get() == Py_True || complex.get() == Py_True;
}

/// The real object \p name (`torch.where`) as a value capture calls.
llvm::Expected<ValuePtr> torchFunction(BuiltinContext& interp, llvm::StringRef name) {
  llvm::Expected<PyRef> object = importObject(name);
  if (!object)
    return object.takeError();
  return interp.values().wrapReal(object->get(), nullptr);
}

llvm::Error linkInputGradients(BuiltinContext& interp, llvm::ArrayRef<ValuePtr> inputs,
                               std::vector<ValuePtr>& results) {
  std::vector<ValuePtr> needGrad;
  for (const ValuePtr& input : inputs) {
    if (!input->isTensor())
      continue;
    llvm::Expected<bool> takesGrad = differentiable(input->object.get());
    if (!takesGrad)
      return takesGrad.takeError();
    if (*takesGrad)
      needGrad.push_back(input);
  }
  if (needGrad.empty())
    return llvm::Error::success();
  llvm::Expected<ValuePtr> sum = torchFunction(interp, "torch.sum");
  llvm::Expected<ValuePtr> add = torchFunction(interp, "torch.add");
  llvm::Expected<ValuePtr> where = torchFunction(interp, "torch.where");
  llvm::Expected<ValuePtr> zeros = torchFunction(interp, "torch.zeros");
  llvm::Expected<ValuePtr> boolType = torchFunction(interp, "torch.bool");
  for (llvm::Expected<ValuePtr>* function : {&sum, &add, &where, &zeros, &boolType})
    if (!*function)
      return function->takeError();
  ValuePtr total;
  for (const ValuePtr& operand : needGrad) {
    llvm::Expected<ValuePtr> part = interp.call(*sum, {operand});
    if (!part)
      return part.takeError();
    llvm::Expected<ValuePtr> joined = total ? interp.call(*add, {total, *part}) : std::move(part);
    if (!joined)
      return joined.takeError();
    total = *joined;
  }
  llvm::Expected<ValuePtr> never = interp.call(*zeros, {makeTuple({})}, {{"dtype", *boolType}});
  if (!never)
    return never.takeError();
  for (ValuePtr& result : results) {
    if (!result->isTensor())
      continue;
    llvm::Expected<bool> takesGrad = differentiable(result->object.get());
    if (!takesGrad)
      return takesGrad.takeError();
    if (!*takesGrad)
      continue;
    llvm::Expected<ValuePtr> dtype = interp.getAttr(result, "dtype");
    if (!dtype)
      return dtype.takeError();
    llvm::Expected<ValuePtr> to = interp.getAttr(total, "to");
    if (!to)
      return to.takeError();
    llvm::Expected<ValuePtr> cast = interp.call(*to, {*dtype});
    if (!cast)
      return cast.takeError();
    llvm::Expected<ValuePtr> linked = interp.call(*where, {*never, *cast, result});
    if (!linked)
      return linked.takeError();
    result = *linked;
  }
  return llvm::Error::success();
}

} // namespace dync::capture
