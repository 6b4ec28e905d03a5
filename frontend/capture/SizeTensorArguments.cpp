//===- SizeTensorArguments.cpp - Tensors given where a schema takes an int ===//
//
// The oracle decides from the operator's schemas which arguments are read
// as ints (oracle_int_arguments.py, size_tensor_arguments); this file reads
// each such tensor first and puts the int in its place.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/SizeTensorArguments.h"

#include "frontend/capture/CaptureError.h"
#include "frontend/capture/TensorNumbers.h"

namespace dync::capture {

using python::PyRef;

namespace {

/// The oracle's size_tensor_arguments (the oracle has imported its module).
llvm::Expected<PyRef> sizeTensorArgumentsFunction() {
  PyRef module = PyRef::steal(PyImport_ImportModule("dync_oracle_int_arguments"));
  PyRef found = module ? PyRef::steal(PyObject_GetAttrString(module.get(), "size_tensor_arguments"))
                       : PyRef();
  if (!found) {
    PyErr_Clear();
    return captureError("the oracle's size_tensor_arguments is missing");
  }
  return found;
}

/// \p value with the tensors \p marks names read as ints: True for the
/// value itself, a tuple of bools over a list's or tuple's items.
llvm::Expected<ValuePtr>
readMarked(const ValuePtr& value, PyObject* marks,
           llvm::function_ref<llvm::Expected<ValuePtr>(const ValuePtr&)> readInt, bool& changed) {
  if (marks == Py_True) {
    changed = true;
    return readInt(value);
  }
  if (!PyTuple_Check(marks) || !value->isSequence() ||
      static_cast<size_t>(PyTuple_GET_SIZE(marks)) != value->items.size())
    return value;
  std::vector<ValuePtr> items;
  for (size_t i = 0; i < value->items.size(); ++i) {
    llvm::Expected<ValuePtr> item = readMarked(
        value->items[i], PyTuple_GET_ITEM(marks, static_cast<Py_ssize_t>(i)), readInt, changed);
    if (!item)
      return item.takeError();
    items.push_back(*item);
  }
  // A list the call is given is read, not kept: a tuple of the same items
  // is what the parser takes the same way.
  return makeTuple(std::move(items));
}

} // namespace

llvm::Expected<bool> readSizeTensors(
    PyObject* callable, PyObject* pyArgs, PyObject* pyKwargs, std::vector<ValuePtr>& args,
    KeywordArgs& kwargs,
    llvm::function_ref<llvm::Expected<ValuePtr>(PyObject*, const ValuePtr&)> callOracle) {
  bool anyTensor = llvm::any_of(args, [](const ValuePtr& arg) {
    return arg->isTensor() ||
           (arg->isSequence() &&
            llvm::any_of(arg->items, [](const ValuePtr& item) { return item->isTensor(); }));
  });
  for (const auto& [name, value] : kwargs)
    anyTensor = anyTensor || value->isTensor() || value->isSequence();
  if (!anyTensor)
    return false;
  llvm::Expected<PyRef> decide = sizeTensorArgumentsFunction();
  if (!decide)
    return decide.takeError();
  PyObject* kwargsDict = pyKwargs ? pyKwargs : Py_None;
  PyRef answer = PyRef::steal(
      PyObject_CallFunctionObjArgs(decide->get(), callable, pyArgs, kwargsDict, nullptr));
  if (!answer) {
    PyErr_Clear();
    return captureError("the oracle's size_tensor_arguments failed");
  }
  if (answer.get() == Py_None)
    return false;
  PyObject* positional = PyTuple_GetItem(answer.get(), 0);
  PyObject* keyword = PyTuple_GetItem(answer.get(), 1);
  PyObject* packed = PyTuple_GetItem(answer.get(), 2);
  if (!positional || !PyList_Check(positional) || !keyword || !PyDict_Check(keyword) || !packed ||
      (packed != Py_None && !PyLong_Check(packed))) {
    PyErr_Clear();
    return captureError("the oracle's size_tensor_arguments answered otherwise than expected");
  }
  llvm::Expected<PyRef> reader = scalarsFunction("int_argument_of_tensor");
  if (!reader)
    return reader.takeError();
  std::vector<std::pair<const Value*, ValuePtr>> readOnce;
  auto readInt = [&](const ValuePtr& tensor) -> llvm::Expected<ValuePtr> {
    for (const auto& [seen, read] : readOnce)
      if (seen == tensor.get())
        return read;
    llvm::Expected<ValuePtr> read = callOracle(reader->get(), tensor);
    if (read)
      readOnce.emplace_back(tensor.get(), *read);
    return read;
  };
  bool changed = false;
  for (size_t i = 0; i < args.size() && static_cast<Py_ssize_t>(i) < PyList_GET_SIZE(positional);
       ++i) {
    llvm::Expected<ValuePtr> read = readMarked(
        args[i], PyList_GET_ITEM(positional, static_cast<Py_ssize_t>(i)), readInt, changed);
    if (!read)
      return read.takeError();
    args[i] = *read;
  }
  for (auto& [name, value] : kwargs) {
    PyObject* marks = PyDict_GetItemString(keyword, name.c_str());
    if (!marks)
      continue;
    llvm::Expected<ValuePtr> read = readMarked(value, marks, readInt, changed);
    if (!read)
      return read.takeError();
    value = *read;
  }
  if (changed && packed != Py_None) {
    // torch's parser takes separate sizes (`x.view(2, n)`) only as plain
    // ints: the read ones go as one list.
    size_t from = PyLong_AsSize_t(packed);
    if (from < args.size()) {
      std::vector<ValuePtr> items(args.begin() + static_cast<std::ptrdiff_t>(from), args.end());
      args.resize(from);
      args.push_back(makeTuple(std::move(items)));
    }
  }
  return changed;
}

} // namespace dync::capture
