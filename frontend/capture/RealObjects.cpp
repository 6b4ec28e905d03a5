//===- RealObjects.cpp - Real objects for values made while capturing -----===//
//
// A class defined while capturing is made for real (ClassBodies.cpp), so
// what its body computed must be real objects too: constants and objects
// are already; containers are rebuilt; functions made while capturing
// (methods, lambdas, decorated functions) get a real function object with
// the same code, globals, defaults and closure.
//
// Such a real function stays tied to the symbolic one it was made from:
// wrapping it again (a method read from the class) gives back the symbolic
// function, so capture keeps running the program's own closure cells. Its
// real cells mirror them as far as they hold values known while capturing
// (STORE_DEREF keeps them in step); a cell holding a tensor is left empty in
// the real function, which only real code (a metaclass, a decorator run for
// real) could ever read.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Interpreter.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/embedding/PyStrings.h"

#include <set>

namespace dync::capture {

using python::PyRef;

namespace {

std::optional<std::string> whyNotRealIn(const ValuePtr& value, std::set<const Value*>& seen) {
  auto inside = [&](llvm::ArrayRef<ValuePtr> items,
                    const std::string& what) -> std::optional<std::string> {
    for (const ValuePtr& item : items)
      if (item)
        if (std::optional<std::string> why = whyNotRealIn(item, seen))
          return what + " " + *why;
    return std::nullopt;
  };
  switch (value->kind) {
  case ValueKind::Constant:
  case ValueKind::Object:
  case ValueKind::NNModule:
  case ValueKind::Builtin:
  case ValueKind::TorchCallable:
    if (value->object)
      return std::nullopt;
    return "a " + spelling(value->kind).str() + " without an object";
  case ValueKind::Tensor:
    return std::string("a tensor, whose values are not known while capturing");
  case ValueKind::SymNum:
    return std::string("a symbolic number, whose value is not known while capturing");
  case ValueKind::Instance:
    return "an object of class '" + qualifiedTypeName(value->object.get()) +
           "' made while capturing, which exists only in capture";
  case ValueKind::Cell:
    // See materializeCell: a cell's contents need not be real.
    return std::nullopt;
  case ValueKind::Tuple:
  case ValueKind::List:
  case ValueKind::Set:
  case ValueKind::Slice:
  case ValueKind::Range: {
    if (!seen.insert(value.get()).second)
      return std::nullopt;
    return inside(value->items, "a " + spelling(value->kind).str() + " holding");
  }
  case ValueKind::Dict: {
    if (!seen.insert(value.get()).second)
      return std::nullopt;
    for (const auto& [key, item] : value->entries) {
      if (std::optional<std::string> why = inside({key, item}, "a dict holding"))
        return why;
    }
    return std::nullopt;
  }
  case ValueKind::Function: {
    if (value->object || !seen.insert(value.get()).second)
      return std::nullopt;
    if (std::optional<std::string> why =
            inside(value->items, "function " + value->qualname + " whose default is"))
      return why;
    for (const auto& [key, item] : value->entries)
      if (std::optional<std::string> why =
              inside({item}, "function " + value->qualname + " whose default is"))
        return why;
    return std::nullopt;
  }
  case ValueKind::BoundMethod:
    return inside(value->items, "a bound method of");
  default:
    return "a " + spelling(value->kind).str();
  }
}

} // namespace

std::optional<std::string> Interpreter::whyNotReal(const ValuePtr& value) {
  std::set<const Value*> seen;
  return whyNotRealIn(value, seen);
}

llvm::Expected<PyRef> Interpreter::materialize(const ValuePtr& value) {
  std::map<const Value*, PyRef> made;
  return materialize(value, made);
}

llvm::Expected<PyRef> Interpreter::materialize(const ValuePtr& value,
                                               std::map<const Value*, PyRef>& made) {
  if (auto it = made.find(value.get()); it != made.end())
    return it->second;
  auto all = [&](llvm::ArrayRef<ValuePtr> items) -> llvm::Expected<PyRef> {
    PyRef list = PyRef::steal(PyList_New(0));
    for (const ValuePtr& item : items) {
      llvm::Expected<PyRef> real = materialize(item, made);
      if (!real)
        return real.takeError();
      if (PyList_Append(list.get(), real->get()) < 0)
        return pythonError("building a list");
    }
    return list;
  };
  switch (value->kind) {
  case ValueKind::Constant:
  case ValueKind::Object:
  case ValueKind::NNModule:
  case ValueKind::Builtin:
  case ValueKind::TorchCallable:
    if (value->object)
      return value->object;
    break;
  case ValueKind::Cell:
    return materializeCell(value);
  case ValueKind::List: {
    // Registered before its items, so a list holding itself is one list.
    PyRef list = PyRef::steal(PyList_New(0));
    made[value.get()] = list;
    llvm::Expected<PyRef> items = all(value->items);
    if (!items)
      return items.takeError();
    if (PyList_SetSlice(list.get(), 0, 0, items->get()) < 0)
      return pythonError("building a list");
    return list;
  }
  case ValueKind::Tuple:
  case ValueKind::Set:
  case ValueKind::Range:
  case ValueKind::Slice: {
    llvm::Expected<PyRef> items = all(value->items);
    if (!items)
      return items.takeError();
    PyRef result;
    if (value->kind == ValueKind::Set) {
      result = PyRef::steal(PySet_New(items->get()));
    } else if (value->kind == ValueKind::Slice || value->kind == ValueKind::Range) {
      PyObject* parts[3];
      for (Py_ssize_t i = 0; i < 3; ++i)
        parts[i] = PyList_GET_ITEM(items->get(), i);
      result = value->kind == ValueKind::Slice
                   ? PyRef::steal(PySlice_New(parts[0], parts[1], parts[2]))
                   : PyRef::steal(
                         PyObject_CallFunctionObjArgs(reinterpret_cast<PyObject*>(&PyRange_Type),
                                                      parts[0], parts[1], parts[2], nullptr));
    } else {
      result = PyRef::steal(PyList_AsTuple(items->get()));
      if (result && value->object && PyType_Check(value->object.get())) {
        // A named tuple takes its fields as arguments, torch.Size an
        // iterable.
        PyRef make = PyRef::steal(PyObject_GetAttrString(value->object.get(), "_make"));
        if (!make)
          PyErr_Clear();
        result = PyRef::steal(
            PyObject_CallOneArg(make ? make.get() : value->object.get(), result.get()));
      }
    }
    if (!result)
      return pythonError("building a " + spelling(value->kind));
    made[value.get()] = result;
    return result;
  }
  case ValueKind::Dict: {
    PyRef dict = PyRef::steal(PyDict_New());
    made[value.get()] = dict;
    for (const auto& [key, item] : value->entries) {
      llvm::Expected<PyRef> realKey = materialize(key, made);
      if (!realKey)
        return realKey.takeError();
      llvm::Expected<PyRef> realItem = materialize(item, made);
      if (!realItem)
        return realItem.takeError();
      if (PyDict_SetItem(dict.get(), realKey->get(), realItem->get()) < 0)
        return pythonError("building a dict");
    }
    return dict;
  }
  case ValueKind::BoundMethod: {
    llvm::Expected<PyRef> self = materialize(value->items[0], made);
    if (!self)
      return self.takeError();
    llvm::Expected<PyRef> function = materialize(value->items[1], made);
    if (!function)
      return function.takeError();
    return PyRef::steal(PyMethod_New(function->get(), self->get()));
  }
  case ValueKind::Function: {
    if (value->object)
      return value->object;
    PyRef qualname = PyRef::steal(python::newStr(value->qualname));
    PyRef function = PyRef::steal(
        PyFunction_NewWithQualName(value->code.get(), value->globals.get(), qualname.get()));
    if (!function)
      return pythonError("making function " + value->qualname);
    // Registered before the defaults and closure are made, so a function
    // that refers to itself (through its closure) is one function.
    value->object = function;
    values_.noteRealFunction(function.get(), value);
    auto fill = [&]() -> llvm::Error {
      if (!value->items.empty()) {
        llvm::Expected<PyRef> defaults = all(value->items);
        if (!defaults)
          return defaults.takeError();
        PyRef tuple = PyRef::steal(PyList_AsTuple(defaults->get()));
        if (!tuple || PyFunction_SetDefaults(function.get(), tuple.get()) < 0)
          return pythonError("setting the defaults of " + value->qualname);
      }
      if (!value->entries.empty()) {
        PyRef kwdefaults = PyRef::steal(PyDict_New());
        for (const auto& [key, item] : value->entries) {
          llvm::Expected<PyRef> realItem = materialize(item, made);
          if (!realItem)
            return realItem.takeError();
          if (PyDict_SetItem(kwdefaults.get(), key->object.get(), realItem->get()) < 0)
            return pythonError("setting the defaults of " + value->qualname);
        }
        if (PyFunction_SetKwDefaults(function.get(), kwdefaults.get()) < 0)
          return pythonError("setting the defaults of " + value->qualname);
      }
      if (!value->closure.empty()) {
        PyRef cells = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(value->closure.size())));
        for (size_t i = 0; i < value->closure.size(); ++i) {
          llvm::Expected<PyRef> cell = materializeCell(value->closure[i]);
          if (!cell)
            return cell.takeError();
          PyTuple_SET_ITEM(cells.get(), static_cast<Py_ssize_t>(i), cell->release());
        }
        if (PyFunction_SetClosure(function.get(), cells.get()) < 0)
          return pythonError("setting the closure of " + value->qualname);
      }
      return llvm::Error::success();
    };
    if (llvm::Error error = fill()) {
      values_.forgetRealFunction(function.get());
      value->object = PyRef();
      return error;
    }
    return function;
  }
  default:
    break;
  }
  return captureError("a " + spelling(value->kind) + " value cannot be made a real object");
}

llvm::Expected<PyRef> Interpreter::materializeCell(const ValuePtr& cell) {
  if (cell->kind != ValueKind::Cell)
    return captureError("a closure holds a " + spelling(cell->kind) + " value, not a cell");
  if (auto it = realCells_.find(cell.get()); it != realCells_.end())
    return it->second.second;
  PyRef real = PyRef::steal(PyCell_New(nullptr));
  if (!real)
    return pythonError("making a cell");
  realCells_[cell.get()] = {cell, real};
  if (llvm::Error error = syncRealCell(cell))
    return error;
  return real;
}

llvm::Expected<ValuePtr> Interpreter::callForReal(PyObject* callable,
                                                  const std::vector<ValuePtr>& args,
                                                  const KeywordArgs& kwargs) {
  if (llvm::Error refused =
          recorder_.irreversible("calling " + describeObject(callable) + " for real"))
    return refused;
  auto real = [&](const ValuePtr& value) -> llvm::Expected<PyRef> {
    if (std::optional<std::string> why = whyNotReal(value))
      return captureError("calling " + describeObject(callable) + " on " + *why +
                          " is not supported");
    return materialize(value);
  };
  PyRef tuple = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(args.size())));
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::Expected<PyRef> arg = real(args[i]);
    if (!arg)
      return arg.takeError();
    PyTuple_SET_ITEM(tuple.get(), static_cast<Py_ssize_t>(i), arg->release());
  }
  PyRef dict = PyRef::steal(PyDict_New());
  for (const auto& [name, value] : kwargs) {
    llvm::Expected<PyRef> arg = real(value);
    if (!arg)
      return arg.takeError();
    if (PyDict_SetItemString(dict.get(), name.c_str(), arg->get()) < 0)
      return pythonError("building call arguments");
  }
  PyRef result = PyRef::steal(PyObject_Call(callable, tuple.get(), dict.get()));
  if (!result)
    return pythonError("calling " + describeObject(callable));
  return values_.wrapReal(result.get(), nullptr);
}

llvm::Error Interpreter::syncRealCell(const ValuePtr& cell) {
  auto it = realCells_.find(cell.get());
  if (it == realCells_.end())
    return llvm::Error::success();
  PyObject* real = it->second.second.get();
  // A rollback gives the real cell back what it held.
  recorder_.onRollback([cell = it->second.second, held = PyRef::borrow(PyCell_GET(real))] {
    PyCell_Set(cell.get(), held.get());
  });
  // Capture reads the symbolic cell (see functionFromReal); the real one
  // holds the same value when it can be real, and is empty otherwise.
  if (!cell->cell || whyNotReal(cell->cell)) {
    PyCell_Set(real, nullptr);
    return llvm::Error::success();
  }
  llvm::Expected<PyRef> contents = materialize(cell->cell);
  if (!contents)
    return contents.takeError();
  PyCell_Set(real, contents->get());
  return llvm::Error::success();
}

} // namespace dync::capture
