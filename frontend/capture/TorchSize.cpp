//===- TorchSize.cpp - torch.Size values over symbolic sizes --------------===//
#include "frontend/capture/TorchSize.h"

#include "frontend/capture/BuiltinContext.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/PythonHelpers.h"

namespace dync::capture {

using python::PyRef;

llvm::Expected<ValuePtr> constructSize(BuiltinContext& interp, const std::vector<ValuePtr>& args,
                                       const KeywordArgs& kwargs) {
  if (!kwargs.empty() || args.size() > 1)
    return captureError("torch.Size takes at most one argument, an iterable of ints");
  std::vector<ValuePtr> items;
  if (!args.empty()) {
    llvm::Expected<std::vector<ValuePtr>> unpacked = interp.unpack(args[0]);
    if (!unpacked)
      return unpacked.takeError();
    items = std::move(*unpacked);
  }
  PyRef list = PyRef::steal(PyList_New(0));
  if (!list)
    return pythonError("building a torch.Size");
  for (const ValuePtr& item : items) {
    // Eager mode would read the tensor's value through __index__.
    if (item->isTensor())
      return captureError("data-dependent size: torch.Size of a tensor's value, which is not "
                          "known while capturing; read the values as ints first "
                          "(torch.Size(t.tolist()), or int(t) for one): the graph then reads "
                          "them from the data when it runs");
    llvm::Expected<PyRef> object = interp.toPython(item);
    if (!object)
      return object.takeError();
    if (PyList_Append(list.get(), object->get()) < 0)
      return pythonError("building a torch.Size");
  }
  PyRef size = PyRef::steal(PyObject_CallOneArg(interp.types().size.get(), list.get()));
  if (!size)
    return pythonError("calling torch.Size");
  // wrapFake keeps the type and reads the items as ints and SymInts.
  return interp.wrapFake(size.get());
}

namespace {

/// `size.numel()`: the product of the items, computed with the symbolic
/// numbers' own `*` so that it stays an expression in the sizes. torch's C
/// implementation asks for each item's value, which specializes it.
llvm::Expected<ValuePtr> sizeNumel(BuiltinContext& interp, const ValuePtr&,
                                   std::vector<ValuePtr>& args, KeywordArgs& kwargs) {
  if (args.size() != 1 || !kwargs.empty())
    return captureError("torch.Size.numel() takes no arguments");
  if (args[0]->kind != ValueKind::Tuple)
    return captureError("torch.Size.numel() called on a " + spelling(args[0]->kind) + " value");
  ValuePtr product = makeInt(1);
  for (const ValuePtr& item : args[0]->items) {
    llvm::Expected<ValuePtr> next = interp.binary("*", product, item);
    if (!next)
      return next.takeError();
    product = *next;
  }
  return product;
}

} // namespace

llvm::Error registerSizeHandlers(BuiltinContext& interp) {
  PyRef numel = PyRef::steal(PyObject_GetAttrString(interp.types().size.get(), "numel"));
  if (!numel)
    return pythonError("reading torch.Size.numel");
  addBuiltin(interp, numel.get(), sizeNumel);
  return llvm::Error::success();
}

bool isSymbolicSize(const SemanticsContext& cx, const ValuePtr& value) {
  if (value->kind != ValueKind::Tuple || value->object.get() != cx.types().size.get())
    return false;
  bool symbolic = false;
  for (const ValuePtr& item : value->items) {
    if (item->kind == ValueKind::SymNum)
      symbolic = true;
    else if (!item->isConstant())
      return false;
  }
  return symbolic;
}

llvm::Expected<ValuePtr> symbolicSizeMethod(SemanticsContext& cx, const ValuePtr& size,
                                            llvm::StringRef name) {
  llvm::Expected<PyRef> real = cx.toPython(size);
  if (!real)
    return real.takeError();
  PyRef method = PyRef::steal(PyObject_GetAttrString(real->get(), name.str().c_str()));
  if (!method)
    return pythonError("reading attribute '" + name + "' of torch.Size");
  if (!PyCallable_Check(method.get()))
    return cx.wrapFake(method.get());
  return makeValue(ValueKind::TorchCallable, std::move(method));
}

} // namespace dync::capture
